"""`trellis lsp` driven by a real third-party client: pytest-lsp (pygls's
client), pinned in .ci/run, over a copy of the example root.

Run by crates/trellis/tests/lsp_clients.rs, which sets TRELLIS_BIN (the binary)
and TRELLIS_LSP_ROOT (a fresh copy of examples/) and puts the pinned install on
PYTHONPATH. Each test starts its own server.
"""

import asyncio
import os
import pathlib
import sys
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = pathlib.Path(os.environ["TRELLIS_LSP_ROOT"])
TRELLIS = os.environ["TRELLIS_BIN"]
TIMEOUT = int(os.environ.get("TRELLIS_LSP_TIMEOUT", "60"))


def uri(relative):
    return (ROOT / relative).as_uri()


def text_of(relative):
    return (ROOT / relative).read_text()


def position(text, needle, nth=0, offset=0):
    """The UTF-16 position of the nth occurrence of needle (plus offset chars)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    at += offset
    line = text.count("\n", 0, at)
    start = text.rfind("\n", 0, at) + 1
    return types.Position(line=line, character=len(text[start:at].encode("utf-16-le")) // 2)


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[TRELLIS, "lsp"],
        server_env={**os.environ, "TRELLIS_ROOT": str(ROOT)},
    ),
)
async def client(lsp_client: LanguageClient):
    # VS Code's capabilities say the client refreshes its code lenses when asked
    # (the server asks once a buffer is saved, or undone to the disk's text);
    # pygls's client has no handler of its own for that request.
    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params):
        return None

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=ROOT.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=ROOT.as_uri(), name="examples")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def open_file(client, relative, text=None):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri(relative),
                language_id="soil" if relative.endswith(".soil") else "trellis",
                version=1,
                text=text_of(relative) if text is None else text,
            )
        )
    )


def replace_all(client, relative, version, text):
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(relative), version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def diagnostics_until(client, target, predicate):
    """Waits until the diagnostics published for `target` satisfy `predicate`."""

    async def wait():
        while not (target in client.diagnostics and predicate(client.diagnostics[target])):
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return client.diagnostics[target]

    return await asyncio.wait_for(wait(), TIMEOUT)


async def hover_text(client, relative, pos):
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri(relative)), position=pos)
    )
    assert hover is not None, f"no hover at {pos}"
    return hover.contents.value


@pytest.mark.asyncio
async def test_open_file_publishes_the_open_hole_as_information(client):
    open_file(client, "inventory/reorder_plan.soil")
    found = await diagnostics_until(client, uri("inventory/reorder_plan.soil"), lambda d: len(d) > 0)
    assert len(found) == 1, found
    hole = found[0]
    assert hole.code == "open-hole"
    assert hole.severity == types.DiagnosticSeverity.Information
    assert "?cases_to_order" in hole.message and ": I64" in hole.message
    assert "target : I64" in hole.message
    assert hole.code_description.href == "trellis-spec:design#3.16"
    assert hole.source == "trellis (fill-hole)"
    text = text_of("inventory/reorder_plan.soil")
    assert hole.range.start == position(text, "?cases_to_order")


@pytest.mark.asyncio
async def test_hover_shows_types_signatures_status_hashes_holes_and_decisions(client):
    open_file(client, "csvstats/median.soil")
    median = text_of("csvstats/median.soil")
    callee = await hover_text(client, "csvstats/median.soil", position(median, "sort xs"))
    assert "csvstats::sort" in callee and "sort : (xs : List F64) -> List F64" in callee
    assert "status: **green**" in callee
    assert "formal `sha256:" in callee and "soil `sha256:" in callee
    local = await hover_text(client, "csvstats/median.soil", position(median, "len s", offset=4))
    assert "s : List F64" in local, local

    open_file(client, "inventory/reorder_plan.soil")
    plan = text_of("inventory/reorder_plan.soil")
    hole = await hover_text(client, "inventory/reorder_plan.soil", position(plan, "?cases_to_order"))
    assert "?cases_to_order : I64" in hole and "`target : I64`" in hole

    open_file(client, "csvstats/median.lock")
    lock = text_of("csvstats/median.lock")
    decision = await hover_text(client, "csvstats/median.lock", position(lock, "total-order"))
    assert "**total-order** (project decision)" in decision
    assert "F64 values compare and sort by the total order" in decision


@pytest.mark.asyncio
async def test_go_to_definition_and_references_cross_tr_and_soil(client):
    open_file(client, "csvstats/median.soil")
    median = text_of("csvstats/median.soil")
    targets = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri("csvstats/median.soil")),
            position=position(median, "sort xs"),
        )
    )
    assert [t.uri for t in targets] == [uri("csvstats/sort.tr"), uri("csvstats/sort.soil")]
    assert targets[0].range.start == position(text_of("csvstats/sort.tr"), "sort :")

    open_file(client, "csvstats/median.lock")
    lock = text_of("csvstats/median.lock")
    entry = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri("csvstats/median.lock")),
            position=position(lock, "total-order"),
        )
    )
    assert [t.uri for t in entry] == [uri("_project.tr")]
    assert entry[0].range.start == position(text_of("_project.tr"), "total-order")

    open_file(client, "csvstats/sort.soil")
    found = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri("csvstats/sort.soil")),
            position=position(text_of("csvstats/sort.soil"), "sort"),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    places = {(pathlib.Path(r.uri).name if False else r.uri.rsplit("/", 2)[-2] + "/" + r.uri.rsplit("/", 1)[-1]) for r in found}
    assert "csvstats/median.soil" in places, places


@pytest.mark.asyncio
async def test_formatting_prints_the_canonical_form(client):
    canonical = text_of("csvstats/median.soil")
    messy = canonical.replace("let s = sort xs in", "let   s =   sort xs   in").replace("\n    at s", "\n        at   s")
    assert messy != canonical
    open_file(client, "csvstats/median.soil", messy)
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri("csvstats/median.soil")),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert len(edits) == 1
    assert edits[0].new_text == canonical


@pytest.mark.asyncio
async def test_an_edit_that_breaks_a_caller_shows_on_the_caller_and_undo_clears_it(client):
    caller = uri("csvstats/median.soil")
    open_file(client, "csvstats/median.soil")
    await diagnostics_until(client, caller, lambda d: len(d) == 0)
    spec = text_of("csvstats/sort.tr")
    open_file(client, "csvstats/sort.tr")
    broken = spec.replace("sort : (xs : List F64) -> List F64", "sort : (xs : List F64) -> Bool")
    assert broken != spec
    replace_all(client, "csvstats/sort.tr", 2, broken)
    found = await diagnostics_until(client, caller, lambda d: len(d) > 0)
    assert any(d.severity == types.DiagnosticSeverity.Error for d in found), found
    assert all(d.code_description.href.startswith("trellis-spec:") for d in found)
    replace_all(client, "csvstats/sort.tr", 3, spec)
    await diagnostics_until(client, caller, lambda d: len(d) == 0)


@pytest.mark.asyncio
async def test_symbols_completion_and_status_lenses(client):
    open_file(client, "csvstats/median.tr")
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri("csvstats/median.tr")))
    )
    assert [s.name for s in symbols] == ["median"]
    children = [c.name for c in symbols[0].children]
    assert children[:3] == ["soil-sig", "requires", "ensures"], children
    assert [c.name for c in symbols[0].children[1].children] == ["non_empty", "finite"]

    text = text_of("csvstats/median.soil")
    partial = text.replace("sort xs", "so xs")
    open_file(client, "csvstats/median.soil", partial)
    items = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri("csvstats/median.soil")),
            position=position(partial, "so xs", offset=2),
        )
    )
    labels = {item.label for item in items}
    assert {"sort", "sort_by", "xs", "_halfway", "len"} <= labels, labels

    spec = text_of("csvstats/mean.tr")
    with_fence = spec + "\n```\n"
    open_file(client, "csvstats/mean.tr", with_fence)
    fences = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri("csvstats/mean.tr")),
            position=position(with_fence, "```\n", nth=with_fence.count("```\n") - 1, offset=3),
        )
    )
    assert {"soil-sig", "requires", "test", "property", "decisions"} <= {i.label for i in fences}

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri("csvstats/mean.tr")))
    )
    assert len(lenses) == 1
    assert lenses[0].command.title.startswith("not-lowered: no Soil has been lowered"), lenses[0].command.title
    open_file(client, "csvstats/sort.tr")
    green = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri("csvstats/sort.tr")))
    )
    assert green[0].command.title == "green"


@pytest.mark.asyncio
async def test_files_outside_the_root_and_a_broken_soil_toml(client):
    with tempfile.TemporaryDirectory() as elsewhere:
        lone = pathlib.Path(elsewhere) / "lone.soil"
        lone.write_text("f x = (\n")
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=lone.as_uri(), language_id="soil", version=1, text=lone.read_text()
                )
            )
        )
        found = await diagnostics_until(client, lone.as_uri(), lambda d: len(d) > 1)
        codes = [d.code for d in found]
        assert codes[0] == "root-outside" and len(codes) >= 2, codes

    toml = text_of("soil.toml")
    open_file(client, "soil.toml")
    replace_all(client, "soil.toml", 2, toml + "\nnot toml at all [\n")
    broken = await diagnostics_until(client, uri("soil.toml"), lambda d: len(d) > 0)
    assert broken[0].code == "config-invalid"
    # The rest of the server keeps answering.
    open_file(client, "csvstats/median.soil")
    median = text_of("csvstats/median.soil")
    assert "csvstats::sort" in await hover_text(client, "csvstats/median.soil", position(median, "sort xs"))
    replace_all(client, "soil.toml", 3, toml)
    await diagnostics_until(client, uri("soil.toml"), lambda d: len(d) == 0)


@pytest.mark.asyncio
async def test_completion_after_multi_byte_characters_offers_only_exported_names(client):
    # `csvstats::` from another module: what csvstats exports, never a private
    # helper (which a call from inventory could not use: unexported-name).
    plan = text_of("inventory/reorder_plan.soil")
    qualified = plan.replace("(map_values stock)", "(map_values stock) csvstats::me")
    open_file(client, "inventory/reorder_plan.soil", qualified)
    items = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri("inventory/reorder_plan.soil")),
            position=position(qualified, "csvstats::me", offset=len("csvstats::me")),
        )
    )
    labels = {item.label for item in items}
    assert {"median", "mean", "sort"} <= labels, labels
    assert not any(label.startswith("_") for label in labels), labels

    # Right after an em dash, curly quotes, an arrow, a no-break space and an
    # emoji, in a spec's prose and in a Soil string literal: an answer, not an
    # internal error (UTF-16 positions, as VS Code counts).
    spec = text_of("inventory/reorder_plan.tr")
    for char in ["\u2014", "\u201c", "\u2192", "\u00a0", "\U0001F600"]:
        prose = spec + f"\nSee {char}reo and {char}\n"
        open_file(client, "inventory/reorder_plan.tr", prose)
        for needle, offset in [(f"{char}reo", 1), (f"{char}reo", 4), (f"and {char}", 5)]:
            pos = position(prose, needle, offset=offset)
            found = await client.text_document_completion_async(
                types.CompletionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri("inventory/reorder_plan.tr")),
                    position=pos,
                )
            )
            assert "reorder_plan" in {item.label for item in found}, (char, needle)
        literal = plan.replace("short = filter", f'tag = "{char}reo" in\n  let short = filter')
        open_file(client, "inventory/reorder_plan.soil", literal)
        found = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri("inventory/reorder_plan.soil")),
                position=position(literal, f"{char}reo", offset=1),
            )
        )
        assert "reorder_plan" in {item.label for item in found}, char
