/**
 * The Responses WebSocket's frame limit (Bun's maxPayloadLength: twice `server.max_body_bytes` at start,
 * at least 64 MiB, src/http/responses-socket.ts) is fixed for the server's lifetime: a reload that
 * raises the body limit past it says so in the log, naming the limit, instead of leaving the operator to
 * find out from a socket closed with 1009.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();
const MIB = 1024 * 1024;

/** Writes the config with `server.max_body_bytes: bytes` and reloads it through the admin API. */
async function reloadWithBodyLimit(bytes: number) {
  writeFileSync(suite.gw.configPath, `server:\n  max_body_bytes: ${bytes}\n${DEFAULT_YAML.replaceAll("{{FAKE}}", suite.gw.fake.url)}`);
  const r = await fetch(`${suite.gw.url}/admin/api/config/reload`, { method: "POST" });
  expect(r.status).toBe(200);
  return (await r.json()) as { changed: { server?: string[] } };
}

const frameWarnings = () => suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.level === "warn" && String(l.msg).includes("Responses WebSocket's frame limit"));

describe("a reload that changes server.max_body_bytes", () => {
  test("within the frame limit set at start (64 MiB for the default 32 MiB): no warning", async () => {
    expect((await reloadWithBodyLimit(40 * MIB)).changed.server).toEqual(["max_body_bytes"]);
    expect(frameWarnings()).toEqual([]);
  });

  test("past it: one warning naming the frame limit and the new body limit", async () => {
    expect((await reloadWithBodyLimit(100 * MIB)).changed.server).toEqual(["max_body_bytes"]);
    const warnings = frameWarnings();
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toMatchObject({ maxBodyBytes: 100 * MIB, socketFrameLimit: 64 * MIB });
    expect(warnings[0].msg).toContain(`a frame larger than ${64 * MIB} bytes still closes the socket (1009) until the gateway is restarted`);
    // Reloading the same file again changes nothing and says nothing more.
    await reloadWithBodyLimit(100 * MIB);
    expect(frameWarnings().length).toBe(1);
  });
});
