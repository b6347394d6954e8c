/**
 * A login the user denies in the browser (SPEC P-9), run as the real CLI: the provider redirects to the
 * login's local callback with `error=access_denied`, and the browser gets a page that says the login was
 * refused and the tab can be closed, written before the CLI exits 1 with "login failed: the provider
 * refused the login (…)". The CLI used to exit before the page was written: the browser showed "Empty
 * reply from server" (team-operator tryout, session 37). Both kinds: Codex's callback, and Claude Code's
 * when its redirect URI is a loopback address (the same listener).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SOURCE_CLI } from "../support/instance.ts";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import { startFakeVendor } from "./fake-oauth.ts";
import { startWorld, type SubscriptionWorld } from "./helpers.ts";

let w: SubscriptionWorld;
beforeAll(async () => {
  const upstream = await startFakeUpstream();
  const vendor = await startFakeVendor(upstream);
  // a second claude-code provider, whose redirect comes back to this machine
  w = await startWorld(
    `
  - id: ccl
    kind: claude-code
    base_url: "{{VENDOR}}/cc"
    oauth:
      authorize_url: "{{VENDOR}}/oauth/authorize"
      token_url: "{{VENDOR}}/oauth/token"
      client_id: test-claude-client
      redirect_uri: "http://127.0.0.1:0/callback"
`.replaceAll("{{VENDOR}}", vendor.url),
    { upstream, vendor },
  );
});
afterAll(async () => {
  await w?.stop();
});

/** Starts `switchyard login KIND --provider ID --no-browser` and reads its stderr until the authorize URL is printed. */
async function loginUntilUrl(kind: string, provider: string) {
  const proc = Bun.spawn([...SOURCE_CLI, "login", kind, "--provider", provider, "--no-browser", "--data-dir", w.gw.dataDir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: w.gw.dataDir },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let err = "";
  for (;;) {
    const m = err.match(/^http:\/\/\S+\/oauth\/authorize\S*$/m);
    if (m) {
      const rest = (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return err;
          err += decoder.decode(value);
        }
      })();
      return { proc, url: new URL(m[0]), stderr: rest };
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`the login ended before printing its URL: ${err}`);
    err += decoder.decode(value);
  }
}

describe("a login refused in the browser", () => {
  for (const [kind, provider] of [["codex", "cx"], ["claude-code", "ccl"]] as const) {
    test(`${kind}: the browser gets a page saying the login was refused, then the CLI exits 1`, async () => {
      const { proc, url, stderr } = await loginUntilUrl(kind, provider);
      const back = new URL(url.searchParams.get("redirect_uri")!);
      expect(back.hostname).toBe("127.0.0.1");

      // a callback of another login is turned away, and this login goes on waiting
      back.searchParams.set("state", "another-login");
      back.searchParams.set("code", "c");
      const stranger = await fetch(back);
      expect([stranger.status, await stranger.text()]).toEqual([400, "State mismatch: this callback belongs to another login."]);

      back.searchParams.delete("code");
      back.searchParams.set("state", url.searchParams.get("state")!);
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_description", "User denied <script>x</script>");
      const page = await fetch(back);
      const html = await page.text();
      expect(page.status).toBe(400);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(html).toContain("<h1>Login refused</h1>");
      expect(html).toContain("The provider refused the login (access_denied: User denied &#60;script&#62;x&#60;/script&#62;). You can close this tab");
      expect(html).not.toContain("<script>");

      expect(await proc.exited).toBe(1);
      expect(await stderr).toContain("login failed: the provider refused the login (access_denied: User denied <script>x</script>)\n");
    });
  }
});
