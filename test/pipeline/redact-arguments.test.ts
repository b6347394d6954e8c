/**
 * Redaction of tool-call arguments and structured tool results (SPEC R-1, S-3; pipeline/redact.ts,
 * pipeline/redact-json.ts): Chat and Responses arguments travel as JSON text and are redacted on their
 * decoded values, so a value right after a `\n` escape is found and the text stays valid JSON; Gemini's
 * `functionCall.args` and nested `functionResponse.response` members are redacted like Anthropic's
 * `tool_use.input`; one value is one placeholder wherever it appears, and restoring it into arguments
 * gives the value back once escaped. Numbering does not depend on later texts. A secret restored into
 * a reply is redacted again in the next request, also without the context it was found by.
 */
import { describe, expect, test } from "bun:test";
import type { Endpoint, RequestContext } from "../../pipeline/context.ts";
import { redact, Redactor } from "../../pipeline/redact.ts";
import { redactJsonText } from "../../pipeline/redact-json.ts";
import type { TextSlot } from "../../formats/codec.ts";
import { stringLeafSlots } from "../../formats/string-leaves.ts";
import { restoreText } from "../../pipeline/restore-placeholders.ts";
import { RestoredSecretMemory } from "../../src/restored-secrets.ts";
import { settableClock } from "../accounts/helpers.ts";
import { guardedContext } from "../support/context.ts";

const EMAIL = "bob@example.com";
const IP = "10.20.30.40";
const KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234";
const GHP = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const PEM = "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEAq7BFUpkGp3+XQ\n-----END PRIVATE KEY-----";
/** The tryout's command: every value right after a newline, which JSON writes as the two characters `\n`. */
const COMMAND = `printf 'owner:\n${EMAIL}\nhost:\n${IP}\nkey:\n${KEY}\ntoken:\t${GHP}'`;
const WANT_COMMAND = "printf 'owner:\n[EMAIL_1]\nhost:\n[IPV4_1]\nkey:\n[SECRET_1]\ntoken:\t[SECRET_2]'";

function run(endpoint: Endpoint, body: Record<string, unknown>): { ctx: RequestContext; raw: string } {
  const ctx = guardedContext(endpoint, body);
  redact(ctx, { enabled: true });
  return { ctx, raw: new TextDecoder().decode(ctx.rawBody) };
}

/** The bytes sent on parse, and hold none of the values. */
function expectClean(raw: string, values = [EMAIL, IP, KEY, GHP, "MIIBVQIB"]) {
  expect(() => JSON.parse(raw)).not.toThrow();
  for (const v of values) expect(raw).not.toContain(v);
}

/** No escape JSON does not have (the old `\[EMAIL_1]`). */
const badEscape = /(?<!\\)(?:\\\\)*\\[^"\\/bfnrtu]/;

describe("a Chat custom tool call's raw input", () => {
  test("is redacted as text (it reaches the model as a function's arguments do)", () => {
    const { raw } = run("chat", {
      model: "m",
      messages: [
        { role: "user", content: "run it" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "custom", custom: { name: "code_exec", input: `mail ${EMAIL} from ${IP}` } }] },
        { role: "tool", tool_call_id: "call_1", content: "done" },
      ],
    });
    expectClean(raw, [EMAIL, IP]);
    expect(JSON.parse(raw).messages[1].tool_calls[0].custom.input).toBe("mail [EMAIL_1] from [IPV4_1]");
  });
});

describe("JSON-text arguments are redacted on their decoded values", () => {
  test("Chat: a value right after \\n or \\t is replaced and the arguments stay valid JSON", () => {
    const args = JSON.stringify({ command: COMMAND });
    const { ctx, raw } = run("chat", {
      model: "m",
      messages: [
        { role: "user", content: "write the file" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "shell", arguments: args } }] },
        { role: "tool", tool_call_id: "call_1", content: "done" },
      ],
    });
    expectClean(raw);
    const sent = JSON.parse(raw).messages[1].tool_calls[0].function.arguments;
    expect(JSON.parse(sent)).toEqual({ command: WANT_COMMAND });
    expect(ctx.trace.redactions).toEqual({ email: 1, ipv4: 1, secret: 2 });
    // The originals are the values, not the escaped text around them.
    expect(restoreText(ctx.restoration!, "[EMAIL_1] [SECRET_1]")).toBe(`${EMAIL} ${KEY}`);
  });

  test("Responses: function_call arguments the same way", () => {
    const { raw } = run("responses", {
      model: "m",
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "write the file" }] },
        { type: "function_call", name: "shell", arguments: JSON.stringify({ command: COMMAND }), call_id: "call_1" },
        { type: "function_call_output", call_id: "call_1", output: "done" },
      ],
    });
    expectClean(raw);
    expect(JSON.parse(JSON.parse(raw).input[1].arguments)).toEqual({ command: WANT_COMMAND });
  });

  test("arguments that do not parse: escapes are read, none is made invalid, values are replaced", () => {
    const r = (t: string) => t.replace(EMAIL, "[EMAIL_1]").replace(KEY, "[SECRET_1]");
    const cut = `{"command":"owner:\\n${EMAIL}\\nkey:\\n${KEY}`; // cut off inside the string
    const out = redactJsonText(cut, r);
    expect(out).toBe('{"command":"owner:\\n[EMAIL_1]\\nkey:\\n[SECRET_1]');
    expect(JSON.parse(out + '"}')).toEqual({ command: "owner:\n[EMAIL_1]\nkey:\n[SECRET_1]" });
    const bad = `{"a":"x\\q\\n${EMAIL}"}`; // an escape JSON does not have, as a client may send
    const out2 = redactJsonText(bad, r);
    expect(out2).not.toContain(EMAIL);
    expect(out2).not.toMatch(badEscape);
    expect(JSON.parse(out2)).toEqual({ a: "x\\q\n[EMAIL_1]" });
    // Untouched text keeps its bytes (spacing, escapes as sent); keys are not values.
    const same = '{ "path" : "a\\/b" ,\n "n": 1 }';
    expect(redactJsonText(same, r)).toBe(same);
    expect(redactJsonText(`{"${EMAIL}": "${EMAIL}"}`, r)).toBe(`{"${EMAIL}": "[EMAIL_1]"}`);
    expect(redactJsonText(`{"${EMAIL}": "${EMAIL}"}`, r, r)).toBe(`{"[EMAIL_1]": "[EMAIL_1]"}`);
    // A card number written as a JSON number becomes the placeholder as a string; plain text stays plain text.
    expect(JSON.parse(redactJsonText('{"card": 4111111111111111, "n": 12}', (t) => t.replace("4111111111111111", "[CARD_1]")))).toEqual({ card: "[CARD_1]", n: 12 });
    expect(redactJsonText(`ls ${EMAIL}`, r)).toBe("ls [EMAIL_1]");
  });

  test("one key block is one placeholder in a tool result and in the client's echo of it inside arguments; restored into arguments it is escaped once", () => {
    const { ctx, raw } = run("chat", {
      model: "m",
      messages: [
        { role: "user", content: "save my key" },
        { role: "assistant", content: null, tool_calls: [{ id: "c0", type: "function", function: { name: "shell", arguments: '{"command":"cat key.pem"}' } }] },
        { role: "tool", tool_call_id: "c0", content: PEM },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "write", arguments: JSON.stringify({ path: "k.pem", content: PEM }) } }] },
        { role: "tool", tool_call_id: "c1", content: "written" },
      ],
    });
    expectClean(raw);
    const b = JSON.parse(raw);
    expect(b.messages[2].content).toBe("[SECRET_1]");
    expect(JSON.parse(b.messages[3].tool_calls[0].function.arguments)).toEqual({ path: "k.pem", content: "[SECRET_1]" });
    expect(ctx.trace.redactions).toEqual({ secret: 2 });
    const back = restoreText(ctx.restoration!, '{"path":"k.pem","content":"[SECRET_1]"}', true);
    expect(JSON.parse(back).content).toBe(PEM);
  });
});

describe("tool results whose text is a JSON document are redacted on their decoded values", () => {
  /** JSON-wrapped shell output: every value right after an escaped newline. */
  const STDOUT = JSON.stringify({ stdout: `owner:\n${EMAIL}\nhost:\n${IP}\nkey:\n${KEY}`, exit: 0 });
  const WANT = { stdout: "owner:\n[EMAIL_1]\nhost:\n[IPV4_1]\nkey:\n[SECRET_1]", exit: 0 };
  const check = (raw: string, result: string) => {
    expectClean(raw);
    expect(result).not.toMatch(badEscape);
    expect(JSON.parse(result)).toEqual(WANT);
  };

  test("Chat tool message", () => {
    const { raw } = run("chat", { model: "m", messages: [{ role: "user", content: "run it" }, { role: "tool", tool_call_id: "c1", content: STDOUT }] });
    check(raw, JSON.parse(raw).messages[1].content);
  });

  test("Anthropic tool_result string", () => {
    const { raw } = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: STDOUT }] }] });
    check(raw, JSON.parse(raw).messages[0].content[0].content);
  });

  test("Responses function_call_output", () => {
    const { raw } = run("responses", { model: "m", input: [{ type: "function_call_output", call_id: "c1", output: `  ${STDOUT}` }] });
    check(raw, JSON.parse(raw).input[0].output);
  });

  test("Gemini: a JSON text in a functionResponse member", () => {
    const { raw } = run("gemini", { contents: [{ role: "user", parts: [{ functionResponse: { name: "shell", response: { output: STDOUT } } }] }] });
    check(raw, JSON.parse(raw).contents[0].parts[0].functionResponse.response.output);
  });

  test("a JSON document inside a JSON document (an MCP result's text, a `body` argument) is redacted on its decoded values too", () => {
    // MCP's result shape: the tool's own JSON output as the text of a content item (the IP after `\n` went
    // upstream in clear, and the address became `\[EMAIL_1]`: invalid JSON inside)
    const MCP = JSON.stringify({ content: [{ type: "text", text: STDOUT }], isError: false });
    const inner = (doc: string) => JSON.parse(JSON.parse(doc).content[0].text);
    const chat = run("chat", { model: "m", messages: [{ role: "user", content: "run it" }, { role: "tool", tool_call_id: "c1", content: MCP }] });
    const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: MCP }] }] });
    const args = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "http", arguments: JSON.stringify({ body: STDOUT }) } }] }] });
    for (const raw of [chat.raw, anthropic.raw, args.raw]) {
      expectClean(raw);
      expect(raw).not.toMatch(/\\\\\[/); // no \[ (an escaped backslash before a placeholder) at any level
    }
    expect(inner(JSON.parse(chat.raw).messages[1].content)).toEqual(WANT);
    expect(inner(JSON.parse(anthropic.raw).messages[0].content[0].content)).toEqual(WANT);
    expect(JSON.parse(JSON.parse(JSON.parse(args.raw).messages[0].tool_calls[0].function.arguments).body)).toEqual(WANT);
    expect(restoreText(args.ctx.restoration!, "[EMAIL_1] [IPV4_1]")).toBe(`${EMAIL} ${IP}`);
  });

  test("a text that only starts like JSON is plain text", () => {
    const { raw } = run("chat", { model: "m", messages: [{ role: "tool", tool_call_id: "c1", content: `[warn] mail ${EMAIL}` }] });
    expect(JSON.parse(raw).messages[0].content).toBe("[warn] mail [EMAIL_1]");
  });
});

describe("a value under a secret-named member, and an address used as a member's name", () => {
  /** The call's arguments: a password only its name says is one (with characters other than letters and digits), a header, and an address as a key. */
  const ARGS = { user: "bob", password: "P@ssw0rd123!", headers: { Authorization: "abc123def456ghi" }, contacts: { [EMAIL]: "admin" } };
  const WANT = { user: "bob", password: "[SECRET_1]", headers: { Authorization: "[SECRET_2]" }, contacts: { "[EMAIL_1]": "admin" } };
  const check = (raw: string, args: unknown) => {
    expectClean(raw, ["P@ssw0rd", "123!", "abc123def456ghi", EMAIL]);
    expect(args).toEqual(WANT);
    expect(Object.keys(args as object)).toEqual(["user", "password", "headers", "contacts"]); // members keep their order
  };

  test("Chat arguments", () => {
    const { ctx, raw } = run("chat", {
      model: "m",
      messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "login", arguments: JSON.stringify(ARGS) } }] }],
    });
    check(raw, JSON.parse(JSON.parse(raw).messages[0].tool_calls[0].function.arguments));
    expect(restoreText(ctx.restoration!, "[SECRET_1] [EMAIL_1]")).toBe(`P@ssw0rd123! ${EMAIL}`);
  });

  test("Responses arguments (an api_key too)", () => {
    const { raw } = run("responses", {
      model: "m",
      input: [
        { type: "function_call", name: "login", call_id: "c1", arguments: JSON.stringify(ARGS) },
        { type: "function_call", name: "call", call_id: "c2", arguments: '{"api_key":"abcd1234efgh5678","max_tokens":"4096"}' },
      ],
    });
    const b = JSON.parse(raw);
    check(raw, JSON.parse(b.input[0].arguments));
    expect(JSON.parse(b.input[1].arguments)).toEqual({ api_key: "[SECRET_3]", max_tokens: "4096" });
  });

  test("Anthropic tool_use.input", () => {
    const { raw } = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "login", input: ARGS }] }] });
    check(raw, JSON.parse(raw).messages[0].content[0].input);
  });

  test("Gemini functionCall.args", () => {
    const { raw } = run("gemini", { contents: [{ role: "model", parts: [{ functionCall: { name: "login", args: ARGS } }] }] });
    check(raw, JSON.parse(raw).contents[0].parts[0].functionCall.args);
  });

  test("a member named __proto__ (an own member after JSON.parse) is redacted and kept when another member is renamed", () => {
    const input = JSON.parse(`{"__proto__":"mail ${EMAIL}","${EMAIL}":1,"z":"y"}`);
    const { raw } = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input }] }] });
    expect(raw).toContain('"input":{"__proto__":"mail [EMAIL_1]","[EMAIL_1]":1,"z":"y"}');
  });

  test("renaming many members rebuilds their object once, in member order (renaming one by one was quadratic)", () => {
    const emails = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`user${i}@example.com`, `v${i}`]));
    // Every write to the object goes through this proxy: one rebuild is a delete and a define per member.
    let writes = 0;
    const input = new Proxy(emails(2_000), {
      defineProperty: (t, k, d) => (writes++, Reflect.defineProperty(t, k, d)),
      deleteProperty: (t, k) => (writes++, Reflect.deleteProperty(t, k)),
    });
    const slots: TextSlot[] = [];
    stringLeafSlots(input, slots);
    for (const slot of slots) if (slot.objectKey) slot.set(slot.text.toUpperCase());
    for (const slot of slots) slot.commit?.();
    expect(writes).toBeLessThanOrEqual(3 * 2_000);
    expect(Object.keys(input).slice(0, 2)).toEqual(["USER0@EXAMPLE.COM", "USER1@EXAMPLE.COM"]);
    // 20,000 of them (106 s for 16,000 before) within the default test timeout, every name replaced, in order
    const { raw } = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: emails(20_000) }] }] });
    const names = Object.entries(JSON.parse(raw).messages[0].content[0].input);
    expect(names.length).toBe(20_000);
    expect(names.every(([k, v], i) => k === `[EMAIL_${i + 1}]` && v === `v${i}`)).toBe(true);
  });

  test("under a secret-named member the whole value is the secret, whatever its characters; a version or an env reference is not", () => {
    const r = new Redactor();
    expect(r.redact("hunter2!abc", "password")).toBe("[SECRET_1]");
    expect(r.redact("abc#12345678", "api_key")).toBe("[SECRET_2]");
    expect(r.redact(" Tr0ub4dor&3 ", "pwd")).toBe(" [SECRET_3] ");
    expect(r.redact("'correct horse 9'", "db_pass")).toBe("'[SECRET_4]'");
    expect(r.redact("sid=a1b2c3d4", "Cookie")).toBe("[SECRET_5]");
    expect([...r.originals.values()].map((o) => o.value)).toEqual(["hunter2!abc", "abc#12345678", "Tr0ub4dor&3", "correct horse 9", "sid=a1b2c3d4"]);
    // a long value under a secret-named member is one secret (a Cookie header of 1,200 characters went in
    // clear past a 512 cap), found in a time linear in its length (5,000 spaces before it took 5 s)
    const long = `${" ".repeat(5_000)}${"x1".repeat(600)}`;
    expect(new Redactor().redact(long, "cookie")).toBe(`${" ".repeat(5_000)}[SECRET_1]`);
    // a value that only starts like a version is a secret (it went in clear: review32)
    expect(new Redactor().redact("2.5Tr0ub4dor&3!", "password")).toBe("[SECRET_1]");
    expect(new Redactor().redact("DB_PASSWORD=3.14Pie4Me!x")).toBe("DB_PASSWORD=[SECRET_1]");
    const kept = { secret: "process.env.SECRET", api_key: "v1.2.3", api_token: "1.2.3-beta.1", passphrase: "${PASSPHRASE}", bypass: "x#12345678", compass: "N 45.3, E 7" };
    for (const [name, value] of Object.entries(kept)) expect({ name, out: new Redactor().redact(value, name) }).toEqual({ name, out: value });
  });

  test("a member name holding a secret after a secret-named key is replaced like text", () => {
    const input = { "password=abc123xyz9": true, token: 1 };
    const { raw } = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input }] }] });
    expect(JSON.parse(raw).messages[0].content[0].input).toEqual({ "password=[SECRET_1]": true, token: 1 });
  });

  test("two member names that would become one placeholder stay two members, each mapped back to its own text", () => {
    const args = { "Bob@Example.com": "owner", "bob@example.com": "admin", team: { "bob@example.com": "lead", "[EMAIL_1]": "literal" } };
    // the literal `[EMAIL_1]` is held back for the whole call: no address is given its number (it was the
    // first address's, so the literal read as that address in the reply)
    const want = { "[EMAIL_2]": "owner", "[EMAIL_3]": "admin", team: { "[EMAIL_2]": "lead", "[EMAIL_1]": "literal" } };
    const chat = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: JSON.stringify(args) } }] }] });
    const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: args }] }] });
    const chatArgs: string = JSON.parse(chat.raw).messages[0].tool_calls[0].function.arguments;
    expect(chatArgs).toBe(JSON.stringify(want)); // no name twice in one object
    expect(JSON.parse(anthropic.raw).messages[0].content[0].input).toEqual(want);
    for (const { ctx } of [chat, anthropic]) {
      expect(restoreText(ctx.restoration!, "[EMAIL_1] [EMAIL_2] [EMAIL_3]")).toBe("[EMAIL_1] Bob@Example.com bob@example.com");
      expect(ctx.trace.redactions).toEqual({ email: 3 });
    }
  });

  test("a value under a secret-named member that is itself a JSON document is one secret in every format, as in Chat arguments", () => {
    // A service account's JSON under `credentials`, a password that happens to parse as JSON: Anthropic
    // and Gemini redacted them as JSON documents, on members no name says are secret, and sent them in clear.
    const SA = JSON.stringify({ type: "service_account", client_email: "x", private_key_id: "0123456789abcdef0123456789abcdef01234567" });
    const args = { credentials: SA, password: '["hunter2!abc"]', note: '{"id":"0123456789abcdef0123456789abcdef01234567"}' };
    const want = { credentials: "[SECRET_1]", password: "[SECRET_2]", note: args.note };
    const chat = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: JSON.stringify(args) } }] }] });
    const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: args }] }] });
    const gemini = run("gemini", { contents: [{ role: "model", parts: [{ functionCall: { name: "f", args } }] }] });
    expect(JSON.parse(JSON.parse(chat.raw).messages[0].tool_calls[0].function.arguments)).toEqual(want);
    expect(JSON.parse(anthropic.raw).messages[0].content[0].input).toEqual(want);
    expect(JSON.parse(gemini.raw).contents[0].parts[0].functionCall.args).toEqual(want);
    for (const { ctx, raw } of [chat, anthropic, gemini]) {
      expect(raw).not.toContain("hunter2");
      expect(raw).not.toContain("service_account");
      expect(restoreText(ctx.restoration!, "[SECRET_2]")).toBe('["hunter2!abc"]');
    }
  });

  test("under a secret-named member an identifier, a dotted name, a plain word, a short value or a number is a secret too", () => {
    const r = new Redactor();
    const values: Array<[string, string]> = [["password", "summer_2024"], ["password", "john.smith1985"], ["db_password", "sunshine"], ["pwd", "          abc"], ["token", "token_count_v2"], ["secret", "config.auth.key1"], ["password", "1234"], ["passphrase", "correct horse battery staple"]];
    expect(values.map(([name, value]) => r.redact(value, name))).toEqual(["[SECRET_1]", "[SECRET_2]", "[SECRET_3]", "          [SECRET_4]", "[SECRET_5]", "[SECRET_6]", "[SECRET_7]", "[SECRET_8]"]);
    expect([...r.originals.values()].map((o) => o.value)).toEqual(values.map(([, v]) => v.trim()));
    // a number: in JSON-text arguments, and as an object's member (it goes as the placeholder, a string)
    const args = { user: "bob", password: 12345678, pin_hint: 1234, account: { passcode: 4321 }, tests: { pass: 40, fail: 0 }, tok: { token: 50256 } };
    const want = { user: "bob", password: "[SECRET_1]", pin_hint: 1234, account: { passcode: "[SECRET_2]" }, tests: { pass: 40, fail: 0 }, tok: { token: 50256 } };
    const chat = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: JSON.stringify(args) } }] }] });
    expect(JSON.parse(JSON.parse(chat.raw).messages[0].tool_calls[0].function.arguments)).toEqual(want);
    const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: args }] }] });
    expect(JSON.parse(anthropic.raw).messages[0].content[0].input).toEqual(want);
    const gemini = run("gemini", { contents: [{ role: "model", parts: [{ functionCall: { name: "f", args } }] }] });
    expect(JSON.parse(gemini.raw).contents[0].parts[0].functionCall.args).toEqual(want);
    expect(restoreText(anthropic.ctx.restoration!, "[SECRET_1] [SECRET_2]")).toBe("12345678 4321");
  });

  test("under a secret-named member a value that says there is none, a mask or a reference is not a secret", () => {
    const kept: Array<[string, string]> = [
      ["password", ""],
      ["password", "null"],
      ["password", "false"],
      ["api_key", "N/A"],
      ["password", "***"],
      ["password", "••••••••"],
      ["api_key", "xxxx-xxxx-xxxx"],
      ["password", "[REDACTED]"],
      ["password", "${DB_PASSWORD}"],
      ["password", "$DB_PASSWORD"],
      ["token", "${{ secrets.GITHUB_TOKEN }}"],
      ["password", "{{ vault_db_password }}"],
      ["password", "<your password>"],
      ["password", "%DB_PASSWORD%"],
      ["api_key", "OPENAI_API_KEY"],
      ["api_key", "process.env.OPENAI_API_KEY"],
      ["private_key", "/etc/ssl/private/server.key"],
      ["private_key", "./keys/app.pem"],
      ["signing_key", "~/.ssh/id_ed25519"],
      ["pwd", "/home/bob/project"],
      // under a name whose value machines make, under 8 characters (a model's token in logprobs, a dependency)
      ["token", "Hel"],
      ["api_key", "abc1234"],
      ["cookie", "^1.1.1"],
      // a version range
      ["cookie", "^1.10.12"],
      ["auth_token", ">=2.0.0-rc.1"],
    ];
    for (const [name, value] of kept) expect({ name, out: new Redactor().redact(value, name) }).toEqual({ name, out: value });
    // a default written into a reference is a value
    expect(new Redactor().redact("${DB_PASSWORD:-hunter2}", "password")).toBe("[SECRET_1]");
  });

  test("a name that is not secret-named is left as it is, with its value", () => {
    const args = { tokens_used: "abc123def456", password_hint: "my dog 2x" };
    const { raw } = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: args }] }] });
    expect(JSON.parse(raw).messages[0].content[0].input).toEqual(args);
  });
});

describe("which member names are secret-named", () => {
  /** A value that is a secret under a secret-named member and nothing a pattern finds by itself. */
  const VALUE = "Tr0ub4dor&3xyz";

  test("the keys of a kind that holds a secret, and any *_token, are secret-named, in members and in text", () => {
    const names = ["encryption_key", "signing_key", "private_key", "client_secret", "access_key", "auth_token", "refresh_token", "encryptionKey", "signingKey", "hmac_key", "master_key", "passcode", "DB_PASSCODE"];
    for (const name of names) expect({ name, out: new Redactor().redact(VALUE, name) }).toEqual({ name, out: "[SECRET_1]" });
    expect(new Redactor().redact("ENCRYPTION_KEY=abc123def456\nsigning_key: 9f8e7d6c5b4a")).toBe("ENCRYPTION_KEY=[SECRET_1]\nsigning_key: [SECRET_2]");
  });

  test("names that only hold the word, or count tokens, are not: their values go as they are", () => {
    const names = ["max_tokens", "tokens", "input_tokens", "total_tokens", "token_count", "key_count", "keyboard", "keys", "primary_key", "cache_key", "sort_key", "password_hint", "tokenizer", "bypass"];
    for (const name of names) expect({ name, out: new Redactor().redact(VALUE, name) }).toEqual({ name, out: VALUE });
    const args = { max_tokens: "4096k8!x", tokens: "ab12cd34!x", primary_key: "user_42:abc!9" };
    const { raw } = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: args }] }] });
    expect(JSON.parse(raw).messages[0].content[0].input).toEqual(args);
    expect(new Redactor().redact("max_tokens=4096k8x2")).toBe("max_tokens=4096k8x2");
  });

  test("pass, pwd, passcode, cookie and authorization after another word in camelCase are secret-named as after a `_`; byPass is not", () => {
    const names = ["dbPass", "smtpPwd", "userPasscode", "adminPassphrase", "sessionCookie", "proxyAuthorization", "db_pass"];
    for (const name of names) expect({ name, out: new Redactor().redact(VALUE, name) }).toEqual({ name, out: "[SECRET_1]" });
    for (const name of ["byPass", "ByPass", "BYPass", "bypass", "compass", "dbpass"]) expect({ name, out: new Redactor().redact(VALUE, name) }).toEqual({ name, out: VALUE });
    // through a tool call's arguments: a PIN under `mysqlPwd` too; digits under `testPass` are a count, as under `test_pass`
    const args = { host: "db1", dbPass: "hunter2", mysqlPwd: 4321, testPass: 12, test_pass: 12 };
    const { raw } = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: JSON.stringify(args) } }] }] });
    expect(JSON.parse(JSON.parse(raw).messages[0].tool_calls[0].function.arguments)).toEqual({ host: "db1", dbPass: "[SECRET_1]", mysqlPwd: "[SECRET_2]", testPass: 12, test_pass: 12 });
  });

  test("after an acronym too (Go and C# write DBPass, SMTPPwd): secret-named, as dbPass is", () => {
    for (const name of ["DBPass", "SMTPPwd", "LDAPPassphrase", "AWSCookie", "HTTPAuthorization", "FTPPasscode"]) expect({ name, out: new Redactor().redact(VALUE, name) }).toEqual({ name, out: "[SECRET_1]" });
    const args = { Host: "db1", DBPass: "hunter2", SMTPPwd: 4321, TestPass: 12 };
    const { raw } = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: args }] }] });
    expect(JSON.parse(raw).messages[0].content[0].input).toEqual({ Host: "db1", DBPass: "[SECRET_1]", SMTPPwd: "[SECRET_2]", TestPass: 12 });
  });
});

describe("Gemini: the model's earlier calls and structured tool results", () => {
  test("functionCall.args and nested functionResponse members are redacted, with the placeholders the text uses", () => {
    const { raw } = run("gemini", {
      contents: [
        { role: "user", parts: [{ text: `deploy as ${EMAIL}` }] },
        { role: "model", parts: [{ functionCall: { name: "run_shell_command", args: { command: `OPENAI=${KEY} ./deploy.sh --notify ${EMAIL}`, flags: ["--host", IP] } } }] },
        {
          role: "user",
          parts: [{ functionResponse: { name: "run_shell_command", response: { output: `deployed; notified ${EMAIL}`, details: { token: GHP, host: IP } } } }],
        },
      ],
    });
    expectClean(raw);
    const b = JSON.parse(raw);
    expect(b.contents[1].parts[0].functionCall).toEqual({ name: "run_shell_command", args: { command: "OPENAI=[SECRET_1] ./deploy.sh --notify [EMAIL_1]", flags: ["--host", "[IPV4_1]"] } });
    expect(b.contents[2].parts[0].functionResponse.response).toEqual({ output: "deployed; notified [EMAIL_1]", details: { token: "[SECRET_2]", host: "[IPV4_1]" } });
  });
});

describe("deeply nested members", () => {
  test("a member nested as deep as a body may nest is redacted (past 64 levels it went upstream in clear)", () => {
    const nest = (levels: number) => {
      let v: unknown = { note: `mail ${EMAIL}`, password: "P@ssw0rd123!" };
      for (let i = 0; i < levels; i++) v = { a: [v] };
      return v as Record<string, unknown>;
    };
    // 2 levels per step: 900 levels, within the guard's MAX_JSON_DEPTH (1,000) with the body around them
    for (const input of [nest(40), nest(450)]) {
      const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input }] }] });
      const gemini = run("gemini", { contents: [{ role: "user", parts: [{ functionResponse: { name: "f", response: input } }] }] });
      for (const { raw } of [anthropic, gemini]) {
        expectClean(raw, [EMAIL, "P@ssw0rd123!"]);
        expect(raw).toContain('{"note":"mail [EMAIL_1]","password":"[SECRET_1]"}');
      }
    }
  });
});

describe("numbering follows the text", () => {
  test("a placeholder written literally in one tool call or JSON document, after an address, is never that address's number", () => {
    const args = { to: EMAIL, body: "Dear [EMAIL_1], your key is in [SECRET_1]", cc: { [EMAIL]: "copy", "[EMAIL_2]": "literal" }, again: EMAIL };
    const want = { to: "[EMAIL_3]", body: "Dear [EMAIL_1], your key is in [SECRET_1]", cc: { "[EMAIL_3]": "copy", "[EMAIL_2]": "literal" }, again: "[EMAIL_3]" };
    const chat = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "mail", arguments: JSON.stringify(args) } }] }] });
    const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "mail", input: args }] }] });
    const gemini = run("gemini", { contents: [{ role: "user", parts: [{ functionResponse: { name: "mail", response: args } }] }] });
    const result = run("chat", { model: "m", messages: [{ role: "tool", tool_call_id: "c1", content: JSON.stringify(args, null, 1) }] });
    expect(JSON.parse(JSON.parse(chat.raw).messages[0].tool_calls[0].function.arguments)).toEqual(want);
    expect(JSON.parse(anthropic.raw).messages[0].content[0].input).toEqual(want);
    expect(JSON.parse(gemini.raw).contents[0].parts[0].functionResponse.response).toEqual(want);
    expect(JSON.parse(JSON.parse(result.raw).messages[0].content)).toEqual(want);
    for (const { ctx } of [chat, anthropic, gemini, result]) {
      // one number for the address, and the literals stay themselves both ways
      expect([...ctx.restoration!.placeholders.keys()]).toEqual(["[EMAIL_3]"]);
      expect(restoreText(ctx.restoration!, "[EMAIL_1] [EMAIL_2] [EMAIL_3]")).toBe(`[EMAIL_1] [EMAIL_2] ${EMAIL}`);
    }
  });

  test("a literal placeholder name written with an escape in JSON text: the renamed address takes another number, and only that one", () => {
    const args = `{"${EMAIL}":"copy","\\u005bEMAIL_1]":"literal","again":"${EMAIL}"}`;
    const { ctx, raw } = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "mail", arguments: args } }] }] });
    expect(JSON.parse(JSON.parse(raw).messages[0].tool_calls[0].function.arguments)).toEqual({ "[EMAIL_2]": "copy", "[EMAIL_1]": "literal", again: "[EMAIL_2]" });
    expect([...ctx.restoration!.placeholders.keys()]).toEqual(["[EMAIL_2]"]);
  });

  test("a literal placeholder written with an escape inside a JSON string value (`\\u005bEMAIL_1]`), at any depth of JSON inside JSON, is held back too", () => {
    // the model reads `Dear [EMAIL_1]`: the address before it got [EMAIL_1], so the reply's literal read as the address
    const inner = '{"note":"Dear \\u005bEMAIL_1], see you"}'; // a JSON document whose own text escapes the bracket
    const args = `{"to":"${EMAIL}","body":"Dear \\u005bEMAIL_1], see you","doc":${JSON.stringify(inner)}}`;
    const chat = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "mail", arguments: args } }] }] });
    const result = run("chat", { model: "m", messages: [{ role: "tool", tool_call_id: "c1", content: args }] });
    const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "mail", input: { to: EMAIL, doc: inner } }] }] });
    const want = { to: "[EMAIL_2]", body: "Dear [EMAIL_1], see you", doc: inner };
    expect(JSON.parse(JSON.parse(chat.raw).messages[0].tool_calls[0].function.arguments)).toEqual(want);
    expect(JSON.parse(JSON.parse(result.raw).messages[0].content)).toEqual(want);
    expect(JSON.parse(anthropic.raw).messages[0].content[0].input).toEqual({ to: "[EMAIL_2]", doc: inner });
    for (const { ctx, raw } of [chat, result, anthropic]) {
      expectClean(raw, [EMAIL]);
      expect([...ctx.restoration!.placeholders.keys()]).toEqual(["[EMAIL_2]"]);
      expect(restoreText(ctx.restoration!, "[EMAIL_1] [EMAIL_2]")).toBe(`[EMAIL_1] ${EMAIL}`);
    }
    // only in the nested document (the outer text escapes its backslash: `\\u005b`)
    const nested = run("chat", { model: "m", messages: [{ role: "tool", tool_call_id: "c1", content: JSON.stringify({ to: EMAIL, doc: inner }) }] });
    expect([...nested.ctx.restoration!.placeholders.keys()]).toEqual(["[EMAIL_2]"]);
  });

  test("within one text, secrets are numbered in text order whichever pattern finds them; a token as a URL password is one placeholder", () => {
    const r = new Redactor();
    const out = r.redact(`DATABASE_PASSWORD=Tr0ub4dor3xyz\nAUTH=Bearer abcdef0123456789abcdef\nKEY=${KEY}\nDB=postgres://app:${GHP}@db/app`);
    expect(out).toBe("DATABASE_PASSWORD=[SECRET_1]\nAUTH=Bearer [SECRET_2]\nKEY=[SECRET_3]\nDB=postgres://app:[SECRET_4]@db/app");
    expect(restoreText({ placeholders: r.originals, counts: {} }, "[SECRET_4]")).toBe(GHP);
  });

  test("a later tool output holding placeholder-shaped text leaves the earlier placeholders as they were", () => {
    const turn1 = [
      { role: "user", content: `mail ${EMAIL} with ${KEY}` },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "grep", arguments: '{"pattern":"EMAIL_"}' } }] },
    ];
    const turn2 = [...turn1, { role: "tool", tool_call_id: "c1", content: "tpl.txt:1: Dear [EMAIL_1], your key [SECRET_1] and [SECRET_2]" }];
    const a = JSON.parse(run("chat", { model: "m", messages: turn1 }).raw);
    const b = JSON.parse(run("chat", { model: "m", messages: turn2 }).raw);
    expect(a.messages[0].content).toBe("mail [EMAIL_1] with [SECRET_1]");
    expect(b.messages.slice(0, 2)).toEqual(a.messages);
    expect(b.messages[2].content).toBe("tpl.txt:1: Dear [EMAIL_1], your key [SECRET_1] and [SECRET_2]");
  });
});

describe("secrets restored into a reply are redacted in the next request", () => {
  /** The tryout's .env: each value is a secret only by what stands before it. */
  const ENV = "DATABASE_PASSWORD=Tr0ub4dor3xyz\nAUTH=Bearer abcdef0123456789abcdef\nDB_URL=postgres://app:hunter2pw@db.internal/app\n";
  const PLAIN = ["Tr0ub4dor3xyz", "abcdef0123456789abcdef", "hunter2pw"];

  test("the reply's values, sent back without their context, go upstream as the same placeholders", () => {
    const clock = settableClock();
    const memory = new RestoredSecretMemory(clock);
    const msgs: Array<Record<string, unknown>> = [
      { role: "user", content: "what is in .env?" },
      { role: "tool", tool_call_id: "c1", content: ENV },
    ];
    const ctx1 = guardedContext("chat", { model: "m", messages: msgs });
    redact(ctx1, { enabled: true }, memory);
    expect(JSON.parse(new TextDecoder().decode(ctx1.rawBody)).messages[1].content).toBe("DATABASE_PASSWORD=[SECRET_1]\nAUTH=Bearer [SECRET_2]\nDB_URL=postgres://app:[SECRET_3]@db.internal/app\n");
    const reply = restoreText(ctx1.restoration!, "The password is [SECRET_1], the token [SECRET_2], the url password [SECRET_3].");
    expect(reply).toBe(`The password is ${PLAIN[0]}, the token ${PLAIN[1]}, the url password ${PLAIN[2]}.`);
    // Turn 2: the client sends the reply back.
    const ctx2 = guardedContext("chat", { model: "m", messages: [...msgs, { role: "assistant", content: reply }, { role: "user", content: `rotate ${PLAIN[0]}x and ${PLAIN[0]}` }] });
    redact(ctx2, { enabled: true }, memory);
    const raw = new TextDecoder().decode(ctx2.rawBody);
    expect(raw.split(PLAIN[0]).length).toBe(2); // only inside the user's longer word below
    for (const v of PLAIN.slice(1)) expect(raw).not.toContain(v);
    const b = JSON.parse(raw);
    expect(b.messages[2].content).toBe("The password is [SECRET_1], the token [SECRET_2], the url password [SECRET_3].");
    expect(b.messages[3].content).toBe(`rotate ${PLAIN[0]}x and [SECRET_1]`);
    // Without the memory (another instance), the values went in clear.
    const ctx3 = guardedContext("chat", { model: "m", messages: [{ role: "assistant", content: reply }] });
    redact(ctx3, { enabled: true });
    expect(new TextDecoder().decode(ctx3.rawBody)).toContain(PLAIN[0]);
  });

  test("a value the conversation keeps sending is kept an hour after it was last sent, not forgotten an hour after the restore", () => {
    const clock = settableClock();
    const memory = new RestoredSecretMemory(clock);
    const ctx1 = guardedContext("chat", { model: "m", messages: [{ role: "tool", tool_call_id: "c1", content: ENV }] });
    redact(ctx1, { enabled: true }, memory);
    const reply = restoreText(ctx1.restoration!, "The password is [SECRET_1]");
    expect(reply).toBe(`The password is ${PLAIN[0]}`);
    const sent = () => {
      const ctx = guardedContext("chat", { model: "m", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: reply }] });
      redact(ctx, { enabled: true }, memory);
      return ctx.rawBody ? JSON.parse(new TextDecoder().decode(ctx.rawBody)).messages[1].content : reply;
    };
    const start = clock.t;
    const at = (min: number) => (clock.t = start + min * 60_000);
    at(10);
    expect(sent()).toBe("The password is [SECRET_1]");
    at(60);
    expect(sent()).toBe("The password is [SECRET_1]");
    at(80); // 80 minutes after the restore, 20 after it was last sent
    expect(sent()).toBe("The password is [SECRET_1]");
    at(150); // 70 minutes without it: forgotten
    expect(sent()).toBe(reply);
  });

  test("the memory keeps at most 64 values for a key, each an hour after it was last restored, none under 8 characters", () => {
    const clock = settableClock();
    const memory = new RestoredSecretMemory(clock).forKey(undefined);
    memory.remember("short7x");
    expect(memory.values()).toEqual([]);
    for (let i = 0; i < 300; i++) memory.remember(`value-${String(i).padStart(4, "0")}`);
    const v = memory.values();
    expect(v.length).toBe(64);
    expect(v[0]).toBe("value-0236");
    expect(memory.values()).toBe(v); // the same array until the set changes
    clock.advance(30 * 60_000);
    memory.remember("value-0250"); // restored again: kept an hour from now
    clock.advance(31 * 60_000);
    expect(memory.values()).toEqual(["value-0250"]);
    clock.advance(30 * 60_000);
    expect(memory.values()).toEqual([]);
  });
});

test("under `pwd` an absolute path is the working directory (an environment dump), not a password; anything else under it still is", () => {
  const r = new Redactor();
  const kept = ["/tmp", "/Users/Jane Doe/code", "~/code", "C:\\work dir"];
  expect(kept.map((v) => r.redact(v, "PWD"))).toEqual(kept);
  expect(kept.map((v) => r.redact(v, "pwd"))).toEqual(kept);
  expect(r.redact("hunter2x", "pwd")).toBe("[SECRET_1]");
  // a password that starts with a slash is not a directory: its symbols say so
  expect(["/Xk9#mQ2z", "/hunter2!x", "C:\\pa$$word"].map((v) => r.redact(v, "pwd"))).toEqual(["[SECRET_2]", "[SECRET_3]", "[SECRET_4]"]);
  expect(["/home/bob/project/", "/srv/app (copy)/v1.2", "/Users/Zoë/Code"].map((v) => r.redact(v, "pwd"))).toEqual(["/home/bob/project/", "/srv/app (copy)/v1.2", "/Users/Zoë/Code"]);
  // the exemption is the working directory's name alone: a path-like value under `password` is a secret
  expect(r.redact("/tmp", "password")).toBe("[SECRET_5]");
});

test("under `pwd` a Windows path with a long part and a symbol after it is looked at in linear time (it took 2^length steps: a 30-character part held the gateway's event loop for seconds, a 40-character one for hours)", () => {
  const r = new Redactor();
  const kept = ["C:\\", "C:\\work", "C:\\work\\", "C:\\Users\\Jane Doe\\code", "C:\\Program Files (x86)\\My App"];
  expect(kept.map((v) => r.redact(v, "pwd"))).toEqual(kept);
  const t0 = performance.now();
  // 28 and 26 characters before the symbol: about 2 s and 0.7 s on the old pattern (each character more doubled it)
  const out = [`C:\\${"a".repeat(28)}#`, "C:\\dev\\my-company-backend-service#2"].map((v) => r.redact(v, "pwd"));
  expect({ out, fast: performance.now() - t0 < 500 }).toEqual({ out: ["[SECRET_1]", "[SECRET_2]"], fast: true });
});
