/**
 * `switchyard import claude-code|codex` (SPEC P-9): the credential files Claude Code and Codex keep
 * (in the shapes those CLIs write) become subscription accounts of the running instance; the files
 * are only read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importCommand } from "../../src/cli/import.ts";
import { accountsCommand } from "../../src/cli/routing.ts";
import { defaultCredentialPath, parseCredentialJson } from "../../src/oauth/credential-files.ts";
import { fakeJwt } from "./fake-oauth.ts";
import { startWorld, until, type SubscriptionWorld } from "./helpers.ts";

let w: SubscriptionWorld;
const home = mkdtempSync(join(tmpdir(), "switchyard-import-"));
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w?.stop();
});

/** Claude Code's ~/.claude/.credentials.json (and ~/.claude.json with the account's e-mail). */
function writeClaudeFiles(accessToken: string, refreshToken: string, expiresAt: number): string {
  const dir = join(home, ".claude");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, ".credentials.json");
  writeFileSync(path, JSON.stringify({ claudeAiOauth: { accessToken, refreshToken, expiresAt, scopes: ["user:inference", "user:profile"], subscriptionType: "max" } }));
  writeFileSync(join(home, ".claude.json"), JSON.stringify({ oauthAccount: { emailAddress: "dana@example.com", accountUuid: "u-1" }, numStartups: 3 }));
  return path;
}

/** Codex's ~/.codex/auth.json. */
function writeCodexFile(accessToken: string, refreshToken: string): string {
  const dir = join(home, "codex-home");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "auth.json");
  const idToken = fakeJwt({ email: "erin@example.com", "https://api.openai.com/auth": { chatgpt_account_id: "acct-erin", chatgpt_plan_type: "plus" } });
  writeFileSync(path, JSON.stringify({ OPENAI_API_KEY: null, tokens: { id_token: idToken, access_token: accessToken, refresh_token: refreshToken, account_id: "acct-erin" }, last_refresh: new Date().toISOString() }, null, 2));
  return path;
}

const snapshot = (p: string) => ({ bytes: readFileSync(p, "utf8"), mtime: statSync(p).mtimeMs });

describe("switchyard import", () => {
  test("claude-code: ~/.claude/.credentials.json (default path) becomes account cc-dana; the file is untouched", async () => {
    const t = w.vendor.seed({ name: "dana", models: ["claude-opus-4-1-20250805"] });
    const expiresAt = Date.now() + 8 * 3600_000;
    const path = writeClaudeFiles(t.accessToken, t.refreshToken, expiresAt);
    const before = snapshot(path);
    expect(defaultCredentialPath("claude-code", { CLAUDE_CONFIG_DIR: join(home, ".claude") })).toBe(path);
    await importCommand("claude-code", { env: { CLAUDE_CONFIG_DIR: join(home, ".claude") } }, w.call, w.io);
    expect(w.out.at(-1)).toBe(`imported ${path} as account cc-dana (provider cc) added; plan max; the file was not modified`);
    expect(snapshot(path)).toEqual(before);
    const stored = await w.gw.app.store.getAccount("cc-dana");
    // with the login's e-mail and plan (for the Accounts card; not secrets)
    expect(stored?.credential).toEqual({ type: "oauth", accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt, email: "dana@example.com", plan: "max" });

    const res = await fetch(`${w.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "cc/claude-opus-4-1", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(w.vendor.calls.some((c) => c.login === "dana" && c.path.startsWith("/v1/messages?beta=true"))).toBe(true);
  });

  test("codex: auth.json via --from becomes account cx-erin with the ChatGPT account id and the JWT's expiry", async () => {
    const t = w.vendor.seed({ name: "erin", chatgptAccountId: "acct-erin", models: ["gpt-5-codex"] });
    const path = writeCodexFile(t.accessToken, t.refreshToken);
    const before = snapshot(path);
    await importCommand("codex", { from: path }, w.call, w.io);
    expect(w.out.at(-1)).toBe(`imported ${path} as account cx-erin (provider cx) added; plan plus; the file was not modified`);
    expect(snapshot(path)).toEqual(before);
    const stored = await w.gw.app.store.getAccount("cx-erin");
    const c = stored!.credential as { accessToken: string; refreshToken?: string; accountId?: string; expiresAt?: number };
    expect(c.accessToken).toBe(t.accessToken);
    expect(c.refreshToken).toBe(t.refreshToken);
    expect(c.accountId).toBe("acct-erin");
    expect(Math.abs(c.expiresAt! - (Date.now() + 3600_000))).toBeLessThan(5000);
  });

  test("importing again updates the same account", async () => {
    const t = w.vendor.seed({ name: "erin", chatgptAccountId: "acct-erin", models: ["gpt-5-codex"] });
    const path = writeCodexFile(t.accessToken, t.refreshToken);
    await importCommand("codex", { from: path, account: "cx-erin" }, w.call, w.io);
    expect(w.out.at(-1)).toContain("as account cx-erin (provider cx) updated");
    expect(((await w.gw.app.store.getAccount("cx-erin"))!.credential as { accessToken: string }).accessToken).toBe(t.accessToken);
  });

  test("--priority places an imported account in its provider's list (lower first); a re-import without it keeps it; a bad one is refused before anything is sent", async () => {
    const first = w.vendor.seed({ name: "pria", models: ["claude-pri-x"] });
    const second = w.vendor.seed({ name: "prib", models: ["claude-pri-x"] });
    const file = (name: string, t: { accessToken: string; refreshToken: string }) => {
      const dir = join(home, name);
      mkdirSync(dir, { recursive: true });
      const path = join(dir, ".credentials.json");
      writeFileSync(path, JSON.stringify({ claudeAiOauth: { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: Date.now() + 3600_000 } }));
      return path;
    };
    await importCommand("claude-code", { from: file("pria", first), account: "cc-pria", priority: "9" }, w.call, w.io);
    expect(w.out.at(-1)).toContain("as account cc-pria (provider cc, priority 9) added");
    await importCommand("claude-code", { from: file("prib", second), account: "cc-prib", priority: "-9" }, w.call, w.io);
    expect((await w.gw.app.store.getAccount("cc-pria"))!.priority).toBe(9);
    const served = async () => {
      const res = await fetch(`${w.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        // A new conversation each time: affinity would keep an earlier one on the account that served it.
        body: JSON.stringify({ model: "cc/claude-pri-x", max_tokens: 20, messages: [{ role: "user", content: `hi ${crypto.randomUUID()}` }] }),
      });
      expect(res.status).toBe(200);
      return w.vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!.login;
    };
    expect(await served()).toBe("prib");
    // Re-imported without --priority: the account keeps its place.
    await importCommand("claude-code", { from: file("prib", second), account: "cc-prib" }, w.call, w.io);
    expect(w.out.at(-1)).toContain("as account cc-prib (provider cc) updated");
    expect((await w.gw.app.store.getAccount("cc-prib"))!.priority).toBe(-9);
    // Moved behind the other one.
    await importCommand("claude-code", { from: file("prib", second), account: "cc-prib", priority: "20" }, w.call, w.io);
    expect(await served()).toBe("pria");
    const calls = w.vendor.calls.length;
    for (const bad of ["high", "1.5", "2000000", ""]) {
      let msg = "";
      await importCommand("claude-code", { from: file("prib", second), account: "cc-prib", priority: bad }, w.call, w.io).catch((e) => (msg = String(e)));
      expect(msg).toContain(`--priority ${JSON.stringify(bad)}: a priority is a whole number from -1000000 to 1000000 (lower comes first, as accounts[].priority in the config file)`);
    }
    expect((await w.gw.app.store.getAccount("cc-prib"))!.priority).toBe(20);
    expect(w.vendor.calls.length).toBe(calls);
    // (the later tests count on cc's accounts being their own)
    await w.call("DELETE", "/accounts/cc-pria");
    await w.call("DELETE", "/accounts/cc-prib");
  });

  test("`accounts remove` takes an imported account out of the database and out of routing; removing it again is a 404", async () => {
    const t = w.vendor.seed({ name: "gale", models: ["claude-opus-4-1-20250805"] });
    const dir = join(home, "gale");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, ".credentials.json");
    writeFileSync(path, JSON.stringify({ claudeAiOauth: { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: Date.now() + 3600_000 } }));
    await importCommand("claude-code", { from: path, account: "cc-gale" }, w.call, w.io);
    const ask = () =>
      fetch(`${w.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "cc/claude-opus-4-1", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
      });
    const listed = async () => ((await w.call("GET", "/accounts")) as { accounts: { id: string }[] }).accounts.map((a) => a.id);
    expect(await listed()).toContain("cc-gale");

    await accountsCommand("remove", { id: "cc-gale" }, w.call, w.io);
    expect(w.out.at(-1)).toBe("removed account cc-gale");
    expect(await w.gw.app.store.getAccount("cc-gale")).toBeUndefined();
    expect(await listed()).not.toContain("cc-gale");
    // the only other account of provider cc (cc-dana, imported above) serves; gale's token is not used again
    w.vendor.calls.length = 0;
    expect((await ask()).status).toBe(200);
    expect(w.vendor.calls.some((c) => c.login === "gale")).toBe(false);
    expect(w.vendor.calls.some((c) => c.login === "dana")).toBe(true);
    let msg = "";
    await accountsCommand("remove", { id: "cc-gale" }, w.call, w.io).catch((e) => (msg = String(e)));
    expect(msg).toContain("error 404: No stored account cc-gale.");
  });

  test("a file of the wrong shape is refused with its path, never quoting a token", async () => {
    const path = join(home, "bad.json");
    writeFileSync(path, JSON.stringify({ claudeAiOauth: { refreshToken: "sk-ant-ort01-very-secret" } }));
    let msg = "";
    await importCommand("claude-code", { from: path }, w.call, w.io).catch((e) => (msg = String(e)));
    expect(msg).toContain(path);
    expect(msg).toContain("claudeAiOauth.accessToken");
    expect(msg).not.toContain("very-secret");
    await importCommand("codex", { from: join(home, "missing.json") }, w.call, w.io).catch((e) => (msg = String(e)));
    // A missing file says how to get one, or how to log in without it.
    expect(msg).toContain(`${join(home, "missing.json")} does not exist: log in with Codex (\`codex login\`) on this machine first, name its file with --from PATH, or log in through switchyard with \`switchyard login codex\``);
  });

  test("a Codex login is refused for a claude-code provider (and the reverse), through the CLI and the admin API; nothing is stored or sent", async () => {
    const t = w.vendor.seed({ name: "wrongkind", chatgptAccountId: "acct-wrong", models: ["gpt-5-codex"] });
    const path = writeCodexFile(t.accessToken, t.refreshToken);
    w.vendor.calls.length = 0;
    let msg = "";
    await importCommand("codex", { from: path, provider: "cc", account: "cc-wrongkind" }, w.call, w.io).catch((e) => (msg = String(e)));
    expect(msg).toContain("error 400: Provider cc is a claude-code provider; a codex login cannot be used there");
    expect(msg).toContain("it goes to a codex provider: cx (--provider cx)");
    expect(await w.gw.app.store.getAccount("cc-wrongkind")).toBeUndefined();

    // The admin API refuses it without being told the kind: the access token is evidently ChatGPT's.
    const post = (body: unknown) =>
      fetch(`${w.gw.url}/admin/api/accounts`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${w.gw.app.adminToken}` },
        body: JSON.stringify(body),
      });
    const res = await post({ provider: "cc", id: "cc-wrongkind", credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; param: string; message: string } };
    expect(body.error.code).toBe("wrong_provider_kind");
    expect(body.error.param).toBe("provider");
    expect(JSON.stringify(body)).not.toContain(t.refreshToken);
    // and the reverse: a Claude login (told by kind, or by its sk-ant- shape) for the codex provider cx
    expect((await post({ provider: "cx", kind: "claude-code", id: "cx-wrong", credential: { type: "oauth", access_token: "opaque-claude" } })).status).toBe(400);
    const rev = await post({ provider: "cx", id: "cx-wrong", credential: { type: "oauth", access_token: "sk-ant-oat01-not-for-openai" } });
    expect(rev.status).toBe(400);
    expect(((await rev.json()) as { error: { message: string } }).error.message).toContain("Provider cx is a codex provider; a claude-code login cannot be used there");
    expect(await w.gw.app.store.getAccount("cx-wrong")).toBeUndefined();
    // A body's kind naming the provider's own kind does not let the other vendor's token through:
    // `kind: claude-code` with a ChatGPT JWT for cc, and `kind: codex` with an sk-ant- token for cx.
    const told = await post({ provider: "cc", kind: "claude-code", id: "cc-wrongkind", credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken } });
    expect(told.status).toBe(400);
    const toldBody = (await told.json()) as { error: { code: string; message: string } };
    expect(toldBody.error.code).toBe("wrong_provider_kind");
    expect(toldBody.error.message).toContain("Provider cc is a claude-code provider; a codex login cannot be used there");
    expect(JSON.stringify(toldBody)).not.toContain(t.accessToken);
    expect(await w.gw.app.store.getAccount("cc-wrongkind")).toBeUndefined();
    const toldRev = await post({ provider: "cx", kind: "codex", id: "cx-wrong", credential: { type: "oauth", access_token: "sk-ant-oat01-not-for-openai" } });
    expect(toldRev.status).toBe(400);
    expect(await w.gw.app.store.getAccount("cx-wrong")).toBeUndefined();
    await Bun.sleep(100);
    // neither token reached the other vendor's API or token endpoint
    expect(w.vendor.calls.some((c) => c.login === "wrongkind")).toBe(false);
  });

  test("a login already expired with no refresh token is refused (it could only be quarantined); an expired one that can refresh says it is being refreshed", async () => {
    const t = w.vendor.seed({ name: "stale", models: ["claude-opus-4-1-20250805"] });
    const dir = join(home, "stale");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, ".credentials.json");
    const now = Date.now();
    writeFileSync(path, JSON.stringify({ claudeAiOauth: { accessToken: t.accessToken, expiresAt: now - 3600_000 } }));
    let msg = "";
    await importCommand("claude-code", { from: path, account: "cc-stale" }, w.call, w.io).catch((e) => (msg = String(e)));
    expect(msg).toContain("error 400: This login expired 60 min ago and holds no refresh token, so it can neither be used nor renewed: log in again with Claude Code (`claude`, then /login) and import it again, or run `switchyard login claude-code`.");
    expect(await w.gw.app.store.getAccount("cc-stale")).toBeUndefined();

    writeFileSync(path, JSON.stringify({ claudeAiOauth: { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: now - 600_000 } }));
    await importCommand("claude-code", { from: path, account: "cc-stale", now }, w.call, w.io);
    expect(w.out.at(-1)).toBe(
      `imported ${path} as account cc-stale (provider cc) added; the file was not modified; its access token expired 10 min ago and is being refreshed (switchyard accounts status says if that fails)`,
    );    await w.call("DELETE", "/accounts/cc-stale");
  });

  test("a quarantined credential says why and the way back (accounts status, the card's field); its client gets a credential 503, not overloaded_error", async () => {
    // A login without a refresh token that the provider then refuses: nothing to recover with.
    const t = w.vendor.seed({ name: "norefresh", models: ["claude-haiku-4-5"] });
    await w.call("POST", "/accounts", { provider: "cc", id: "cc-norefresh", credential: { type: "oauth", access_token: t.accessToken, expires_at: Date.now() + 3600_000 } });
    w.vendor.revokeAccess(t.accessToken);
    const ask = () =>
      fetch(`${w.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "cc/claude-haiku-4-5", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
      });
    // (cc-dana, imported above, also serves cc: disable it so cc-norefresh is the provider's only account)
    await w.call("POST", "/accounts/cc-dana/disable");
    try {
      await ask();
      type St = { accounts: Array<{ id: string; reasons: string[]; quarantine?: { reason: string; advice: string } }> };
      const mine = async () => ((await w.call("GET", "/accounts")) as St).accounts.find((a) => a.id === "cc-norefresh")!;
      await until(async () => (await mine()).quarantine !== undefined);
      const a = await mine();
      expect(a.quarantine!.reason).toContain("no refresh token to recover with");
      expect(a.quarantine!.reason).not.toContain("after refresh");
      expect(a.quarantine!.advice).toBe("log in again (switchyard login claude-code --account cc-norefresh) or import a fresh login (switchyard import claude-code --account cc-norefresh)");
      expect(a.reasons).toContain(`credential quarantined (${a.quarantine!.reason}) until replaced: ${a.quarantine!.advice}`);

      const res = await ask();
      expect(res.status).toBe(503);
      const err = ((await res.json()) as { error: { type: string; message: string } }).error;
      expect(err.type).toBe("api_error");
      expect(err.message).toContain("no refresh token to recover with");
      expect(err.message).toContain("an operator brings it back with a new switchyard login or import");
      expect(err.message).not.toContain("cc-norefresh");
    } finally {
      await w.call("POST", "/accounts/cc-dana/enable");
    }
  });

  test("the wrong file, a directory or a bad --account get the friendly sentences, not the validator's words", async () => {
    const t = w.vendor.seed({ name: "mixup", chatgptAccountId: "acct-mixup", models: ["gpt-5-codex"] });
    const codexFile = writeCodexFile(t.accessToken, t.refreshToken);
    const fail = async (kind: string, opts: Parameters<typeof importCommand>[1]) => {
      let msg = "";
      await importCommand(kind, opts, w.call, w.io).catch((e) => (msg = String(e)));
      return msg;
    };
    expect(await fail("claude-code", { from: codexFile })).toBe(
      `Error: cannot import: ${codexFile}: the file is a Codex login (auth.json), not a claude-code one: import it with \`switchyard import codex\` (to a provider of that kind)`,
    );
    const claudeFile = join(home, "mixup.json");
    writeFileSync(claudeFile, JSON.stringify({ claudeAiOauth: { accessToken: "sk-ant-oat01-x", refreshToken: "sk-ant-ort01-y" } }));
    expect(await fail("codex", { from: claudeFile })).toContain("the file is a Claude Code login (.credentials.json), not a codex one: import it with `switchyard import claude-code`");
    const other = join(home, "other.json");
    writeFileSync(other, JSON.stringify({ something: 1 }));
    expect(await fail("claude-code", { from: other })).toBe(`Error: cannot import: ${other}: the file has no claudeAiOauth object (is this Claude Code's .credentials.json?)`);
    expect(await fail("codex", { from: other })).toBe(`Error: cannot import: ${other}: the file has no tokens object (logged in with an API key instead of ChatGPT?)`);
    expect(await fail("claude-code", { from: home })).toBe(`Error: cannot import: ${home} is a directory: name the credential file itself (.credentials.json)`);
    expect(await fail("codex", { from: codexFile, account: "bad name!" })).toBe('Error: --account "bad name!": an account name is 1–64 letters, digits, dot, dash or underscore, starting with a letter or digit');
    for (const m of [await fail("claude-code", { from: codexFile }), await fail("codex", { from: claudeFile })]) expect(m).not.toContain("Invalid key");
  });

  test("the same login imported under a second name is named in a warning; a re-import of a disabled account says it enabled it", async () => {
    const t = w.vendor.seed({ name: "twin", models: ["claude-opus-4-1-20250805"] });
    const dir = join(home, "twin");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, ".credentials.json");
    writeFileSync(path, JSON.stringify({ claudeAiOauth: { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: Date.now() + 3600_000 } }));
    await importCommand("claude-code", { from: path, account: "cc-twin" }, w.call, w.io);
    expect(w.out.at(-1)).toBe(`imported ${path} as account cc-twin (provider cc) added; the file was not modified`);
    await importCommand("claude-code", { from: path, account: "cc-twin2" }, w.call, w.io);
    expect(w.out.at(-2)).toBe(`imported ${path} as account cc-twin2 (provider cc) added; the file was not modified`);
    expect(w.out.at(-1)).toBe("warning: cc-twin holds the same login: one refresh token, which the first refresh rotates, so the other account is then quarantined; keep one (switchyard accounts remove cc-twin)");
    await w.call("DELETE", "/accounts/cc-twin2");

    await w.call("POST", "/accounts/cc-twin/disable");
    await importCommand("claude-code", { from: path, account: "cc-twin" }, w.call, w.io);
    expect(w.out.at(-1)).toBe(`imported ${path} as account cc-twin (provider cc) updated, enabled again (it was disabled); the file was not modified`);
    await w.call("DELETE", "/accounts/cc-twin");
  });

  test("shapes: Claude expiresAt in seconds is read as ms; Codex without account_id takes it from the id token", () => {
    const c = parseCredentialJson("claude-code", { claudeAiOauth: { accessToken: "a", refreshToken: "r", expiresAt: 1_800_000_000 } });
    expect(c.credential.expiresAt).toBe(1_800_000_000_000);
    const x = parseCredentialJson("codex", {
      tokens: { access_token: "opaque", refresh_token: "r", id_token: fakeJwt({ "https://api.openai.com/auth": { chatgpt_account_id: "from-jwt" } }) },
    });
    expect(x.credential.accountId).toBe("from-jwt");
    expect(x.credential.expiresAt).toBeUndefined();
  });
});
