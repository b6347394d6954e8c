/**
 * The settings a reload cannot change (src/config/restart-only.ts): the address and the database are
 * read once, at start, so a reload that changes them says which wait for a restart and what holds
 * until then, instead of listing them among the changes as if they had applied.
 */
import { describe, expect, test } from "bun:test";
import { restartNeeded, type StartedWith } from "../../src/config/restart-only.ts";
import { ok } from "./helpers.ts";

const URL = "http://127.0.0.1:20128";
const started = (yaml: string, flags: Partial<StartedWith["flags"]> = {}): StartedWith => ({
  config: ok(yaml),
  url: URL,
  flags: { host: false, port: false, database: false, ...flags },
});

describe("restartNeeded", () => {
  test("a changed port and host: each one, with the address the gateway keeps listening on", () => {
    expect(restartNeeded(ok("server:\n  host: 0.0.0.0\n  port: 9000\n"), started(""))).toEqual([
      { path: "server.host", message: `server.host changed to 0.0.0.0: it takes effect when switchyard is restarted; until then it listens on ${URL}` },
      { path: "server.port", message: `server.port changed to 9000: it takes effect when switchyard is restarted; until then it listens on ${URL}` },
    ]);
  });

  test("a port given to start (--port) wins over the file, after a restart too: said so", () => {
    expect(restartNeeded(ok("server:\n  port: 9000\n"), started("", { port: true }))).toEqual([
      { path: "server.port", message: `server.port is now 9000 in the file, but this instance was started with --port, which wins over the file; it listens on ${URL}` },
    ]);
  });

  test("a changed database: never its value (a secret), the store in use", () => {
    const next = ok("server:\n  database: postgres://u:hunter2@db/switchyard\n");
    const r = restartNeeded(next, started(""));
    expect(r).toEqual([{ path: "server.database", message: "server.database changed: it takes effect when switchyard is restarted; until then this instance uses its SQLite database in the data directory" }]);
    expect(JSON.stringify(r)).not.toContain("hunter2");
    expect(restartNeeded(ok(""), started("server:\n  database: postgres://u:hunter2@db/switchyard\n"))[0]!.message).toEndWith("until then this instance uses the PostgreSQL database it started with");
  });

  test("what applies at once (settings, limits, hosts, the trace ring) needs no restart, nor a value back to the one in use", () => {
    const next = ok("server:\n  require_api_key: true\n  max_body_bytes: 1000\n  allowed_hosts: [gateway.lan]\nsettings:\n  trace_ring_size: 50\n  max_attempts: 2\n");
    expect(restartNeeded(next, started(""))).toEqual([]);
    expect(restartNeeded(ok("server:\n  port: 20128\n"), started(""))).toEqual([]);
  });
});
