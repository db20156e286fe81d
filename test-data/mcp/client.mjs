// Drives `trellis _mcp` with the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk 1.32.2, the initialize handshake).
// usage: node client.mjs DATA-DIR TRELLIS ROOT SOCKET JOB — prints the same lines
// as client.py (without the protocol line). Run from a directory whose
// node_modules holds the SDK: ES modules resolve against the script's location.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [here, trellis, root, socket, job] = process.argv.slice(2);
const script = JSON.parse(readFileSync(join(here, "script.json"), "utf8"));
const expectedTools = JSON.parse(readFileSync(join(here, "tools_list.json"), "utf8"));

function summary(document) {
  if ("tag" in document) return document.tag;
  if ("checks" in document) return "holes:" + document.checks.holes.map((h) => h.name).join(",");
  if ("cases" in document) {
    const tags = [...new Set(document.cases.map((c) => c.outcome.tag))].sort();
    return tags.length === 1 && tags[0] === "Pass" ? "all-pass" : "cases:" + tags.join(",");
  }
  if ("asked" in document) return "asked";
  return Object.keys(document)[0];
}

function shown(result) {
  if (result.content.length !== 1 || result.content[0].type !== "text") throw new Error("one text item");
  const text = result.content[0].text;
  const document = JSON.parse(text);
  if (JSON.stringify(document) !== text) throw new Error("not compact: " + text);
  if (result.isError) {
    for (const d of document.errors) {
      if (!("repair_class" in d) || !("spec_ref" in d)) throw new Error("diagnostic without repair_class/spec_ref");
    }
    return document.errors[0].code;
  }
  return summary(document);
}

const transport = new StdioClientTransport({
  command: trellis,
  args: ["_mcp", "--job", job, "--socket", socket, "--root", root],
});
const client = new Client({ name: "trellis-conformance", version: "1" });
await client.connect(transport);
const info = client.getServerVersion();
console.log("server", info.name, info.version);
const listed = await client.listTools();
console.log("tools", listed.tools.map((t) => t.name).join(","));
const plain = listed.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
console.log("schemas", JSON.stringify(plain) === JSON.stringify(expectedTools) ? "equal" : "DIFFERENT");
const median = readFileSync(join(root, "csvstats", "median.soil"), "utf8");
for (const step of script) {
  const args = JSON.parse(JSON.stringify(step.arguments).replace('"@median.soil"', JSON.stringify(median)));
  const result = await client.callTool({ name: step.tool, arguments: args });
  console.log("step", step.tool, result.isError ? "error" : "ok", shown(result));
}
await client.close();
