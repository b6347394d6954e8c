/**
 * `switchyard setup --model NAME` asks the gateway several times (the key probe, the model, the admin dry
 * run, the routed target's model entry). A gateway that stops answering between two of them must end
 * setup with the one line every CLI command prints for an instance that does not answer, not a stack:
 * here a fake gateway drops the connection on the last request, after routing a bare model name.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const MAIN = resolve(import.meta.dir, "../../src/main.ts");
const home = mkdtempSync(join(tmpdir(), "sy-setup-lost-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

test("a gateway that stops answering before the routed model's entry ends setup with one line", async () => {
  const seen: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req, srv) {
      const path = new URL(req.url).pathname;
      seen.push(`${req.method} ${path}`);
      if (path === "/v1/models") return Response.json({ object: "list", data: [] });
      if (path === "/v1/models/bare-model") return Response.json({ error: { message: "no such model" } }, { status: 404 });
      if (path === "/admin/api/dry-run") {
        return Response.json({ attempts: [{ target: "prov/real-model", accountId: "acct" }], targets: [{ target: "prov/real-model", providerId: "prov", model: "real-model" }] });
      }
      // the instance goes away mid-setup: the connection closes with no answer
      srv.stop(true);
      return new Promise<Response>(() => {});
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  const proc = Bun.spawn(["bun", MAIN, "setup", "claude-code", "--model", "bare-model", "--url", url, "--client-key", "sy-lost-key", "--dry-run"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, SWITCHYARD_ADMIN_KEY: "sy-admin-lost" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  server.stop(true);
  expect(seen).toEqual(["GET /v1/models", "GET /v1/models/bare-model", "POST /admin/api/dry-run", "GET /v1/models/prov/real-model"]);
  expect(stdout).toBe("");
  expect(stderr.trim()).toBe(`no running switchyard instance answers at ${url}`);
  expect(code).toBe(1);
});
