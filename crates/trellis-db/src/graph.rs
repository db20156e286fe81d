//! Strongly connected components (Tarjan's algorithm, iterative so a deep call
//! chain cannot overflow the stack), for definition and type cycles.

use std::collections::BTreeMap;

pub type Graph<N> = BTreeMap<N, Vec<N>>;

/// The components of `graph`, each sorted, in no particular order. Edges to nodes
/// that are not keys of the graph are ignored.
pub fn strongly_connected<N: Ord + Clone>(graph: &Graph<N>) -> Vec<Vec<N>> {
    let nodes: Vec<&N> = graph.keys().collect();
    let position: BTreeMap<&N, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let edges: Vec<Vec<usize>> = nodes
        .iter()
        .map(|node| {
            graph[*node]
                .iter()
                .filter_map(|t| position.get(t).copied())
                .collect()
        })
        .collect();
    let count = nodes.len();
    let mut index = vec![usize::MAX; count];
    let mut low = vec![0; count];
    let mut on_stack = vec![false; count];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut components = Vec::new();
    for root in 0..count {
        if index[root] != usize::MAX {
            continue;
        }
        // Each frame: (node, next edge to visit).
        let mut frames = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (node, ref mut edge)) = frames.last_mut() {
            if let Some(&target) = edges[node].get(*edge) {
                *edge += 1;
                if index[target] == usize::MAX {
                    index[target] = next;
                    low[target] = next;
                    next += 1;
                    stack.push(target);
                    on_stack[target] = true;
                    frames.push((target, 0));
                } else if on_stack[target] {
                    low[node] = low[node].min(index[target]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(nodes[member].clone());
                    if member == node {
                        break;
                    }
                }
                component.sort();
                components.push(component);
            }
        }
    }
    components
}

/// The cycle through `start` (its component when that has two or more members,
/// sorted), found by exploring only what `successors` leads to from `start`. A
/// query built on this depends on the graph below `start` and nothing else, so an
/// edit elsewhere in the root leaves it (and its durability) untouched.
pub fn cycle_through<N: Ord + Clone>(
    start: &N,
    mut successors: impl FnMut(&N) -> Vec<N>,
) -> Option<Vec<N>> {
    let mut graph: Graph<N> = Graph::new();
    let mut pending = vec![start.clone()];
    while let Some(node) = pending.pop() {
        if graph.contains_key(&node) {
            continue;
        }
        let next = successors(&node);
        pending.extend(next.iter().filter(|n| !graph.contains_key(*n)).cloned());
        graph.insert(node, next);
    }
    strongly_connected(&graph)
        .into_iter()
        .find(|component| component.contains(start))
        .filter(|component| component.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cycles_and_singletons() {
        let mut graph: Graph<&str> = Graph::new();
        graph.insert("a", vec!["b"]);
        graph.insert("b", vec!["c", "a"]);
        graph.insert("c", vec!["c", "missing"]);
        graph.insert("d", vec!["a"]);
        let mut components = strongly_connected(&graph);
        components.sort();
        assert_eq!(components, vec![vec!["a", "b"], vec!["c"], vec!["d"]]);
    }

    #[test]
    fn cycle_through_explores_only_below_its_start() {
        let successors = |node: &&str| -> Vec<&str> {
            match *node {
                "top" => vec!["a"],
                "a" => vec!["b"],
                "b" => vec!["a", "leaf"],
                "leaf" => vec!["leaf"],
                other => panic!("explored {other}, which is not below the start"),
            }
        };
        assert_eq!(cycle_through(&"b", successors), Some(vec!["a", "b"]));
        assert_eq!(cycle_through(&"top", successors), None);
        assert_eq!(
            cycle_through(&"leaf", successors),
            None,
            "a self-call is no cycle"
        );
    }
}
