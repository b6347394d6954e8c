/**
 * A local try-out with no provider account: starts the test fake upstream (it answers every request
 * with a short canned reply in the request's format) and switchyard in front of it, with one provider
 * per wire format, then prints the dashboard's address, what to try, and how the CLI finds this instance
 * (its data directory is a temporary one, not ~/.switchyard). Test tooling only: the fake is never a
 * built-in provider. test/scripts/demo.test.ts runs what it prints.
 *
 *   scripts/demo [--port 20128]
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { startApp } from "../src/app.ts";
import { stopOnSignals } from "../src/stop-signals.ts";
import { startFakeUpstream } from "../test/support/fake-upstream.ts";
import { demoConfigYaml } from "./lib/demo-config.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { port: { type: "string" } }, strict: true });
const fake = await startFakeUpstream({ defaultText: "Hello from the switchyard demo upstream." });
const dataDir = mkdtempSync(join(tmpdir(), "switchyard-demo-"));
const configPath = join(dataDir, "config.yaml");
writeFileSync(configPath, demoConfigYaml(fake.url));
const app = await startApp({ configPath, dataDir, host: "127.0.0.1", port: values.port ? Number(values.port) : 0 });
// The gateway stops as `switchyard start`'s does (its "shutting down" and "stopped" lines, its exit
// status in last-exit.json for `switchyard stop --data-dir`); the fake upstream after it.
stopOnSignals(app, { afterShutdown: () => fake.stop() });
// The CLI as this shell can run it (the demo may be started from outside the checkout).
const cli = `bun ${relative(process.cwd(), join(import.meta.dir, "../src/main.ts")) || "src/main.ts"}`;
process.stderr.write(`switchyard demo listening on ${app.url} (fake upstream ${fake.url}; config ${configPath})

Dashboard: ${app.url}/dashboard

Try:
  curl -s ${app.url}/v1/chat/completions -d '{"model":"demo","messages":[{"role":"user","content":"hi"}]}'
  curl -sN ${app.url}/v1/messages -d '{"model":"demo-chat/gpt-demo","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
  curl -s ${app.url}/v1/responses -d '{"model":"demo-gemini/gemini-demo","input":"hi"}'
  ANTHROPIC_BASE_URL=${app.url} ANTHROPIC_API_KEY=x claude -p hi --model demo
  ${cli} calls list --data-dir ${dataDir}

Point Claude Code at it (the CLI finds this instance by --data-dir or --url, not in ~/.switchyard;
--dry-run shows the change, without it ~/.claude/settings.json is written, with a backup):
  ${cli} setup claude-code --model demo --data-dir ${dataDir} --dry-run

Ctrl-C stops both.
`);
