/**
 * Found in review (2026-12-07), fixed the same day: `switchyard setup codex` over a `~/.codex/config.toml` that starts with
 * a UTF-8 byte order mark (Windows editors write one) is refused: "setup cannot edit this file: at
 * line 1: a key" although Bun's TOML parser (and Codex) read the file. The statement scan of
 * src/cli/toml-edit.ts (tomlStatements) reads U+FEFF as the start of a key. Before d2a9d63d the
 * line-based edit set the keys in such a file (the result parsed with the user's keys kept).
 *
 * Also: a CRLF file whose last line has no line end gets a bare `\n` after that line (the added lines
 * get `\r\n`), so the written file mixes line ends.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PLACEHOLDER_KEY, runSetup } from "../../src/cli/setup.ts";
import { gatewaySettingsIn } from "../../src/cli/setup-undo.ts";

const homes: string[] = [];
afterAll(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
function home(config: string): string {
  const h = mkdtempSync(join(tmpdir(), "sy-setup-bom-"));
  homes.push(h);
  mkdirSync(join(h, ".codex"));
  writeFileSync(join(h, ".codex", "config.toml"), config);
  return h;
}
const run = (h: string) =>
  runSetup({ target: "codex", gatewayUrl: "http://127.0.0.1:20999", key: PLACEHOLDER_KEY, model: { id: "resp/gpt-e2e" }, home: h, dryRun: false, now: () => 1000 });

test("a config.toml with a UTF-8 BOM is edited: setup's keys set, the user's kept", () => {
  const before = '\uFEFFapproval_policy = "never"\n\n[tui]\ntheme = "dark"\n';
  expect(Bun.TOML.parse(before)).toEqual({ approval_policy: "never", tui: { theme: "dark" } }); // a valid file
  const h = home(before);
  run(h); // before the fix: threw "... setup cannot edit this file: at line 1: a key ..."
  const after = readFileSync(join(h, ".codex", "config.toml"), "utf8");
  expect(after.startsWith('\uFEFFapproval_policy = "never"\n')).toBe(true); // the mark kept where it was, once
  expect(after.lastIndexOf("\uFEFF")).toBe(0);
  const parsed = Bun.TOML.parse(after) as Record<string, any>;
  expect(parsed.approval_policy).toBe("never");
  expect(parsed.tui).toEqual({ theme: "dark" });
  expect(parsed.model_provider).toBe("switchyard");
  expect(parsed.model).toBe("resp/gpt-e2e");
  expect(parsed.model_providers.switchyard.base_url).toBe("http://127.0.0.1:20999/v1");
});

test("a CRLF config.toml without a final line end gets CRLF on every line setup writes after it", () => {
  const h = home('approval_policy = "never"\r\n\r\n[tui]\r\ntheme = "dark"');
  run(h);
  const after = readFileSync(join(h, ".codex", "config.toml"), "utf8");
  // before the fix: 'theme = "dark"\n\r\n[model_providers.switchyard]\r\n...': one bare LF
  expect(after.match(/(?<!\r)\n/g) ?? []).toEqual([]);
  expect(after).toContain('\r\n[tui]\r\ntheme = "dark"\r\n\r\n[model_providers.switchyard]\r\n');
});

test("setup's look for its table reads a file with a BOM as TOML: a line inside a multi-line string does not count", () => {
  // before the fix the scan refused the BOM and the line-by-line fallback took the string's line for a table
  expect(gatewaySettingsIn('\uFEFFnote = """\n[model_providers.switchyard]\n"""\n')).toEqual([]);
  expect(gatewaySettingsIn('\uFEFF[model_providers.switchyard]\nbase_url = "http://127.0.0.1:20999/v1"\n')).toEqual(["[model_providers.switchyard]"]);
});
