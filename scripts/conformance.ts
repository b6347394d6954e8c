/**
 * docs/conformance.md from one run of the real-CLI e2e tests (see scripts/conformance).
 *
 * The tests record each scenario's outcome through test/support/conformance.ts into the file named by
 * SWITCHYARD_CONFORMANCE_OUT; this script runs them with that set, then writes one table per CLI and
 * version: a row per lane (the provider format behind the gateway), a column per scenario, `pass` or
 * `FAIL` as the assertions decided (`—` where the suite has no such test). Exits non-zero when a
 * scenario failed or the test run did.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ConformanceRecord, Scenario } from "../test/support/conformance.ts";

const ROOT = resolve(import.meta.dir, "..");
const SCENARIOS: Scenario[] = ["plain answer", "tool round trip", "error after commit"];

/** The markdown document for a set of records. */
export function renderConformance(records: ConformanceRecord[], when: string): string {
  const byCli = new Map<string, ConformanceRecord[]>();
  for (const r of records) {
    const k = `${r.cli}@${r.version}`;
    byCli.set(k, [...(byCli.get(k) ?? []), r]);
  }
  let out = `# Conformance matrix

What the real coding-agent CLIs do through switchyard, as the end-to-end tests in \`test/e2e/cli/\` decide
it: each CLI (pinned version, \`test/support/cli-install.ts\`) runs non-interactively in a scratch HOME
against the gateway, which talks to a local fake upstream in the lane's provider format. Every run
streams. Regenerate with \`scripts/conformance\` (it runs those tests); this file was generated ${when}.

Scenarios:
- **plain answer**: the CLI prints the fake's text; every upstream request went to the lane's provider
  with the account's key as a body that provider's API takes (the fake upstream is strict: it answers
  any other with the provider's 400, test/support/strict-upstream.ts), and the gateway logged each as a 200.
- **tool round trip**: the fake asks for the CLI's shell tool with \`echo switchyard-e2e\`; the CLI runs
  it, sends the output back, and prints the fake's final text that quotes it.
- **error after commit**: the provider's stream breaks off after the first text; the CLI must report an
  error (exit code, error output) and never present the partial text as its answer (SPEC 6.4).

`;
  for (const [cli, rs] of [...byCli].sort()) {
    const lanes = [...new Set(rs.map((r) => r.lane))];
    out += `## ${cli}\n\n| provider lane | ${SCENARIOS.join(" | ")} |\n|---|${SCENARIOS.map(() => "---").join("|")}|\n`;
    for (const lane of lanes) {
      const cells = SCENARIOS.map((s) => {
        const hit = rs.filter((r) => r.lane === lane && r.scenario === s);
        if (hit.length === 0) return "—";
        return hit.every((r) => r.outcome === "pass") ? "pass" : "**FAIL**";
      });
      out += `| ${lane} | ${cells.join(" | ")} |\n`;
    }
    out += "\n";
  }
  out += `## Known CLI behaviour outside the matrix

- Gemini CLI 0.61.0, error after commit: when a stream ends in Gemini's in-band \`{"error": …}\` chunk (what
  switchyard sends after a cut-off, and what Google sends), the CLI retries the turn and in \`-p\` mode
  prints the partial text of every attempt and exits 0 (observed by hand against this gateway); the row
  is left out rather than recorded as the gateway's failure.
- Codex 0.171.0 prints "Model metadata for \`<model>\` not found" for a gateway model unless it has a
  catalog entry: for an API-key provider it reads model metadata only from its bundled catalog or a
  \`model_catalog_json\` file, never from the provider's \`/models\` (only a provider with command
  \`auth\` refreshes from it). \`switchyard setup codex\` writes that file (every model the gateway
  lists, with its context window, compaction limit and reasoning efforts) when it finds Codex (PATH or
  \`--codex-bin\`): each entry must carry a prompt, and setup reads the one Codex sends for a model it
  does not know from that Codex, so the prompt stays unchanged (re-run setup after upgrading Codex).
  The CLI runs in this matrix use no catalog, so they still print the warning.
- Claude Code 2.1.332 logs \`[claude-code:unrecognized_model]\` in \`-p\` mode for a model outside its
  catalog. \`switchyard setup claude-code --model provider/claude-…\` maps the Claude model the name
  says to the gateway name with Claude Code's \`modelOverrides\` setting, which silences it; for any
  other model (GLM, GPT, a combo) no honest mapping exists and the line stays (harmless: the window
  comes from \`CLAUDE_CODE_MAX_CONTEXT_TOKENS\`, which setup writes).
`;
  return out;
}

if (import.meta.main) {
  const dir = mkdtempSync(join(tmpdir(), "sy-conformance-"));
  const file = join(dir, "records.jsonl");
  try {
    const proc = Bun.spawn(["bun", "test", "--timeout", "120000", "test/e2e/cli/"], {
      cwd: ROOT,
      env: { ...process.env, SWITCHYARD_CONFORMANCE_OUT: file },
      stdout: "inherit",
      stderr: "inherit",
    });
    const code = await proc.exited;
    const records: ConformanceRecord[] = existsSync(file)
      ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as ConformanceRecord)
      : [];
    if (records.length === 0) {
      console.error("scripts/conformance: the CLI tests recorded nothing; docs/conformance.md left as it was");
      process.exit(1);
    }
    const when = new Date().toISOString().replace(/\.\d+Z$/, " UTC").replace("T", " ");
    writeFileSync(join(ROOT, "docs", "conformance.md"), renderConformance(records, when));
    const failed = records.filter((r) => r.outcome === "fail").length;
    console.log(`docs/conformance.md: ${records.length} scenario runs, ${failed} failed`);
    process.exit(code !== 0 || failed > 0 ? 1 : 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
