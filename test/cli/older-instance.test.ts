/**
 * A CLI built after the instance it talks to was started (newuser14 K2): a 404 `unknown_url` from the
 * admin API — a path that instance's build does not have — says that the instance runs another build and
 * to restart it, instead of only "Unknown path". A 405 — the path is there, the method is not: `keys set`'s
 * PATCH against a gateway started before it existed — says the gateway does not support changing a key
 * and to upgrade or restart it, instead of "error 405" and the instance's message.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SOURCE_CLI } from "../support/instance.ts";
import { buildSource } from "../../src/version.ts";

let server: ReturnType<typeof Bun.serve>;
const dirs: string[] = [];
beforeAll(() => {
  // An "older instance": its admin API has no such path; /admin/api/keys/NAME takes DELETE only.
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => {
      const path = new URL(req.url).pathname;
      // an error quoting a name a client chose, with a line break and an ESC in it
      if (path === "/admin/api/accounts/x/unlock") return Response.json({ error: { message: "No account named \"a\nerror 0: fine\u001b[2J\"." } }, { status: 400 });
      if (path.startsWith("/admin/api/keys/") && req.method !== "DELETE") {
        return Response.json({ error: { message: `The method ${req.method} is not allowed on ${path}; it takes DELETE.`, type: "invalid_request_error", param: null, code: "method_not_allowed" } }, { status: 405, headers: { allow: "DELETE" } });
      }
      return Response.json({ error: { message: `Unknown path: ${req.method} ${path}`, type: "invalid_request_error", param: null, code: "unknown_url" } }, { status: 404 });
    },
  });
});
afterAll(() => {
  server.stop(true);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function run(instance: Record<string, unknown>, args = ["keys", "list"]): Promise<{ code: number; err: string }> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-older-"));
  dirs.push(dir);
  writeFileSync(join(dir, "instance.json"), JSON.stringify({ url: `http://127.0.0.1:${server.port}`, adminToken: "t", pid: 4264, version: "0.1.0", ...instance }));
  // not spawnSync: the "instance" answers from this process's event loop
  const p = Bun.spawn([...SOURCE_CLI, ...args, "--data-dir", dir], { stdout: "pipe", stderr: "pipe" });
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  return { code, err: err.trim() };
}

test("an instance of another commit, or one older than builds that name theirs: the 404 says to restart it with this build", async () => {
  const own = buildSource().commit;
  expect(own).toBeDefined(); // run from the checkout
  const other = await run({ commit: "0123abc" });
  expect(other).toEqual({
    code: 1,
    err: `error 404: Unknown path: GET /admin/api/keys; the running instance (pid 4264) is commit 0123abc and this command is commit ${own}: restart the instance with this build (switchyard start, or service install) to get the admin API this command uses`,
  });
  const old = await run({});
  expect(old.err).toContain("; the running instance (pid 4264) is a build older than this command's (it names no commit): restart the instance with this build");
  // the same build: only the 404 (the path is wrong, not the instance), also when one side has
  // uncommitted edits of that commit (review14 R4)
  expect((await run({ commit: own })).err).toBe("error 404: Unknown path: GET /admin/api/keys");
  expect((await run({ commit: own!.endsWith("-dirty") ? own!.slice(0, -6) : `${own}-dirty` })).err).toBe("error 404: Unknown path: GET /admin/api/keys");
  // a build that could not tell its commit: maybe another build, not "older"
  expect((await run({ commit: "unknown" })).err).toContain("; the running instance (pid 4264) may be another build than this command's (its commit is not known): if it was started before this build, restart");
}, 20_000);

test("keys set against a gateway without PATCH /admin/api/keys/NAME (405): says it does not support changing a key and to upgrade or restart it, exit 1", async () => {
  const r = await run({ commit: "0123abc" }, ["keys", "set", "ci", "--rpm", "5"]);
  expect(r).toEqual({
    code: 1,
    err: `the running gateway at http://127.0.0.1:${server.port} (pid 4264, commit 0123abc) does not support changing a key (HTTP 405: it has no PATCH /admin/api/keys/ci); upgrade it or restart it on this version (switchyard start, or switchyard service install), then run the command again`,
  });
}, 20_000);

test("a 405 that is not the gateway's own JSON error (a proxy in front of it that does not pass PATCH on): said as it came, with both readings, not 'upgrade it'", async () => {
  const proxy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("<html><body>405 Not Allowed</body></html>", { status: 405, headers: { "content-type": "text/html" } }) });
  try {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-older-"));
    dirs.push(dir);
    writeFileSync(join(dir, "instance.json"), JSON.stringify({ url: `http://127.0.0.1:${proxy.port}`, adminToken: "t", pid: 4264, version: "0.1.0", commit: "0123abc" }));
    const p = Bun.spawn([...SOURCE_CLI, "keys", "set", "ci", "--rpm", "5", "--data-dir", dir], { stdout: "pipe", stderr: "pipe" });
    const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    expect(code).toBe(1);
    expect(err).toContain("error 405: ");
    expect(err).toContain(`http://127.0.0.1:${proxy.port} does not take PATCH on /admin/api/keys/ci: a proxy in front of the gateway that does not pass PATCH on, or a gateway build from before 2026-12-05`);
    expect(err).not.toContain("upgrade it or restart it");
  } finally {
    proxy.stop(true);
  }
}, 20_000);

test("the gateway's error message is printed on one line, its line break and ESC escaped (it may quote a client's name)", async () => {
  const r = await run({}, ["accounts", "unlock", "x"]);
  expect(r).toEqual({ code: 1, err: 'error 400: No account named "a\\nerror 0: fine\\u001b[2J".' });
});
