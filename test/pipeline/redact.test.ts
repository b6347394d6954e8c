/**
 * Redaction (SPEC R-1, S-3; pipeline/redact.ts): each kind of PII is replaced by a placeholder that is
 * stable within the request; ordinary code (hashes, UUIDs, versions, dates, times, ports) is not
 * mistaken for it; the stage rewrites every text the model reads in each client format and nothing
 * else, re-serialises the body, and counts by kind in the trace without the values.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RequestContext } from "../../pipeline/context.ts";
import { luhn, redact, Redactor } from "../../pipeline/redact.ts";
import { restoreText } from "../../pipeline/restore-placeholders.ts";
import { guardedContext } from "../support/context.ts";
import { clientRequest } from "../support/fixtures.ts";

const red = (text: string) => {
  const r = new Redactor();
  return { out: r.redact(text), counts: r.counts };
};

describe("each kind is replaced by a numbered placeholder", () => {
  test("emails (the same address, any case, is the same placeholder)", () => {
    const { out, counts } = red("Contact alice@example.com or bob.smith+ci@mail.example.co.uk; cc Alice@Example.com.");
    expect(out).toBe("Contact [EMAIL_1] or [EMAIL_2]; cc [EMAIL_1].");
    expect(counts).toEqual({ email: 3 });
  });

  test("card numbers with a valid Luhn digit, plain or grouped (the same card is one placeholder)", () => {
    const { out, counts } = red("visa 4111 1111 1111 1111, again 4111111111111111, amex 3782-822463-10005, mc 5555555555554444");
    expect(out).toBe("visa [CARD_1], again [CARD_1], amex [CARD_2], mc [CARD_3]");
    expect(counts).toEqual({ card: 4 });
    expect(luhn("4111111111111111")).toBe(true);
    expect(luhn("4111111111111112")).toBe(false);
  });

  test("API keys and tokens of the common shapes", () => {
    const samples = [
      "sk-proj-Xq7fR2mP9sLk4Tz8Wv1Nb6Jc3Hd5",
      "sk-ant-api03-Zt3Hq9Xr2Lm7Pw4Kv8Nj1Bc6Fd5Gs0",
      "sk_live_51HxQ2aKz9Lm3Pq7Rt8Vw",
      "AKIAIOSFODNN7EXAMPLE",
      "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
      "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
      "xoxb-2048-4096-Zt3Hq9Xr2Lm7Pw4K",
      "AIzaSyD-3Hq9Xr2Lm7Pw4Kv8Nj1Bc6Fd5Gs0Tq",
      "glpat-Zt3Hq9Xr2Lm7Pw4Kv8Nj1",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpM",
      // the shortest shapes without a digit: a text holding only them is still searched
      "eyJabcdefghij.eyJabcdefghij.abcdefghij",
      "xoxb-abcdefghij",
    ];
    for (const s of samples) expect(red(`key: ${s} end`).out).toBe("key: [SECRET_1] end");
    expect(red("curl -H 'Authorization: Bearer 7f3a9c2e1b8d4f6a0e5c' https://api").out).toBe("curl -H 'Authorization: Bearer [SECRET_1]' https://api");
    expect(red("export OPENAI_API_KEY=Zt3Hq9Xr2Lm7Pw4Kv8\nDB_PASSWORD='hunter22x'").out).toBe("export OPENAI_API_KEY=[SECRET_1]\nDB_PASSWORD='[SECRET_2]'");
    expect(red('{"client_secret": "a8f5f167f44f4964e6c998dee827110c"}').out).toBe('{"client_secret": "[SECRET_1]"}');
    expect(red("postgres://app:s3cr3t-pw@db.internal:5432/app").out).toBe("postgres://app:[SECRET_1]@db.internal:5432/app");
    const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x2y3z\nabcDEF==\n-----END RSA PRIVATE KEY-----";
    expect(red(`key file:\n${pem}\ndone`).out).toBe("key file:\n[SECRET_1]\ndone");
  });

  test("a value assigned to a secret-named key in text runs to white space, a quote or the line's end, symbols included", () => {
    const r = new Redactor();
    const out = r.redact("the password: Tr0ub4dor&3!x then\nAPI_KEY=abc123#def!g\nDB_PASSWORD='P@ss$w0rd%^*~' and secret=\"9a?b:c/d+e=\"");
    expect(out).toBe("the password: [SECRET_1] then\nAPI_KEY=[SECRET_2]\nDB_PASSWORD='[SECRET_3]' and secret=\"[SECRET_4]\"");
    expect([...r.originals.values()].map((o) => o.value)).toEqual(["Tr0ub4dor&3!x", "abc123#def!g", "P@ss$w0rd%^*~", "9a?b:c/d+e="]);
    // a query string's next parameter is not part of the value; a long run of key characters is still one value
    expect(red("GET /v1?api_key=abc123def&format=json&token=zz9yy8xx7#top").out).toBe("GET /v1?api_key=[SECRET_1]&format=json&token=[SECRET_2]");
    const blob = "Ab1+".repeat(1_500);
    expect(red(`AWS_SESSION_TOKEN=${blob} next`).out).toBe("AWS_SESSION_TOKEN=[SECRET_1] next");
  });

  test("IPv4 and IPv6 addresses", () => {
    const { out, counts } = red("from 203.0.113.9 via 10.0.3.7:5432 and 2001:db8::8a2e:370:7334, link fe80::1ff:fe23:4567:890a; 203.0.113.9 again");
    expect(out).toBe("from [IPV4_1] via [IPV4_2]:5432 and [IPV6_1], link [IPV6_2]; [IPV4_1] again");
    expect(counts).toEqual({ ipv6: 2, ipv4: 3 });
  });

  test("phone numbers: international with +, North-American forms", () => {
    const { out } = red("call +1 (415) 555-2671, +44 20 7946 0958, +4915112345678, (212) 555-0100 or 212-555-0100");
    expect(out).toBe("call [PHONE_1], [PHONE_2], [PHONE_3], [PHONE_4] or [PHONE_4]");
  });
});

describe("ordinary code is not redacted", () => {
  const untouched = (text: string) => expect(red(text).out).toBe(text);

  test("hex hashes, base64 integrity hashes, UUIDs", () => {
    untouched("commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)");
    untouched("sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    untouched('"integrity": "sha512-9a7KzUqLkMLl4bG8T5c7Xm1wF0Q2b1wQ3tZ8XyOe7Tq2Zs5c9RkTj4Hn0aZ0o6r9wL3k1b2c3d4e5f6g7h8i9j0kA=="');
    untouched("session 550e8400-e29b-41d4-a716-446655440000 and 00000000-0000-4000-8000-000000000003");
    untouched("const hash = 0x1db71064; color: #ff00aa; id = 4532015112830366n4");
  });

  test("versions, dates, times, timestamps, numbers, ports, line:col", () => {
    untouched("bun 1.4.5, node v18.19.1, chrome 120.0.6099.109, version 1.2.3.4, v10.0.0.1");
    untouched("2026-11-30T07:42:00.000Z, 2024-01-15 10:30:00, 15.01.2024, 2024/01/15, 12:34:56");
    untouched("ts 1700000000000 ns 1700000000000000000 and 20240115 and 4096 tokens, 3.14159, 1,234,567");
    untouched("listening on 127.0.0.1:20128 and 0.0.0.0:8080, mask 255.255.255.0, src/app.ts:128:17");
    untouched("range 100-200-3000, ISBN 978-3-16-148410-0, call 123-456-7890 (not a NANP number)");
    untouched("4111111111111112 fails Luhn; 1234 5678 9012 3456 is not a card network");
  });

  test("identifiers that look like addresses or keys", () => {
    untouched("std::vector<int> v; a::b; dead::beef; MAC aa:bb:cc:dd:ee:ff; loopback ::1");
    untouched("git@github.com:org/repo.git, Co-Authored-By: Claude <noreply@anthropic.com>, pkg@1.2.3, @scope/pkg");
    untouched("max_tokens: 32000, token = process.env.GITHUB_TOKEN_2, password: str, input_tokens=1234, tokenizer = load()");
    untouched("Authorization: Bearer KEY, Bearer tokens are documented here");
    // code after a secret-named key: a call, an object's next member, a placeholder, a variable
    untouched("password = hash_pw(x1), token=getT(2); {password:t.password,token:r1}; password: [SECRET_1]; API_KEY=$OPENAI_KEY2 %DB_PASS2%");
  });

  test("real files: this repository's lockfile, source, README and the real client captures", () => {
    const root = join(import.meta.dir, "..", "..");
    for (const f of ["bun.lock", "package.json", "pipeline/attempt-loop.ts", "formats/hub.ts", "README.md", "test/pipeline/save-tokens-fixtures/git-diff.txt"]) {
      let text = readFileSync(join(root, f), "utf8");
      // The README's example database URLs carry a password (a secret by design, tested above) and a user@host.
      if (f === "README.md") text = text.replace(/\bpostgres(?:ql)?:\/\/\S+/g, "postgres://DATABASE");
      untouched(text);
    }
    for (const f of ["claude-code-default.json", "claude-code-tool-use-2.json", "codex-default.json", "codex-tool-use-2.json"]) {
      untouched(readFileSync(join(root, "test/fixtures/shared/clients", f), "utf8"));
    }
  });
});

const ENDPOINT = { "anthropic-messages": "messages", "openai-chat": "chat", "openai-responses": "responses" } as const;

function ctxFor(format: keyof typeof ENDPOINT, body: Record<string, unknown>): RequestContext {
  return guardedContext(ENDPOINT[format], body);
}

const EMAIL = "dana.lee@corp.example";
const KEY = "sk-proj-Xq7fR2mP9sLk4Tz8Wv1Nb6Jc3Hd5";
const IP = "203.0.113.44";

describe("the redact stage on client bodies", () => {
  test("Anthropic (Claude Code's real turn 2): system, user text, tool input and tool result; consistent placeholders", async () => {
    const body = await clientRequest("claude-code-tool-use-2.json");
    body.system[2].text += `\nThe user is ${EMAIL}.`;
    const user = body.messages[0].content.at(-1);
    user.text = `deploy to ${IP} as ${EMAIL} with ${KEY}`;
    const tu = body.messages[1].content[1];
    tu.input.command = `ssh deploy@${IP} 'echo ${KEY}'`;
    body.messages[2].content[0].content = `Connected to ${IP}\nwhoami: ${EMAIL}\n`;
    body.messages.splice(1, 0, { role: "assistant", content: [{ type: "thinking", thinking: `signed thought about ${EMAIL}`, signature: "c2lnbmF0dXJl" }] }, { role: "user", content: "ok" });
    const ctx = ctxFor("anthropic-messages", body);
    redact(ctx, { enabled: true });
    const b = ctx.body as any;
    expect(b.system[2].text).toEndWith("\nThe user is [EMAIL_1].");
    expect(b.messages[0].content.at(-1).text).toBe("deploy to [IPV4_1] as [EMAIL_1] with [SECRET_1]");
    expect(b.messages[3].content[1].input.command).toBe("ssh deploy@[IPV4_1] 'echo [SECRET_1]'");
    expect(b.messages[4].content[0].content).toBe("Connected to [IPV4_1]\nwhoami: [EMAIL_1]\n");
    // Signed thinking, ids, names, tools, the model and metadata are not touched.
    expect(b.messages[1].content[0].thinking).toBe(`signed thought about ${EMAIL}`);
    expect(b.messages[3].content[1].id).toBe("toolu_fake_1");
    expect(b.model).toBe("claude-sonnet-4-5");
    expect(JSON.stringify(b.tools)).toBe(JSON.stringify(body.tools));
    expect(b.metadata).toEqual(body.metadata);
    // The bytes that travel are the redacted body; the values appear nowhere but the signed thinking.
    const raw = new TextDecoder().decode(ctx.rawBody);
    expect(JSON.parse(raw)).toEqual(b);
    expect(raw.split(EMAIL).length).toBe(2);
    expect(raw).not.toContain(KEY);
    expect(raw).not.toContain(IP);
    expect(ctx.trace.redactions).toEqual({ email: 3, secret: 2, ipv4: 3 });
    expect(JSON.stringify(ctx.trace)).not.toContain(EMAIL);
  });

  test("Responses (Codex's real turn 2): developer text, function_call arguments and output", async () => {
    const body = await clientRequest("codex-tool-use-2.json");
    body.input[3].content[0].text = `mail ${EMAIL} the report`;
    body.input[4].arguments = JSON.stringify({ cmd: `grep -r ${EMAIL} logs/` });
    body.input[5].output = `logs/a.log:3:login ${EMAIL} from ${IP}\n`;
    const ctx = ctxFor("openai-responses", body);
    redact(ctx, { enabled: true });
    const b = ctx.body as any;
    expect(b.input[3].content[0].text).toBe("mail [EMAIL_1] the report");
    expect(JSON.parse(b.input[4].arguments)).toEqual({ cmd: "grep -r [EMAIL_1] logs/" });
    expect(b.input[5].output).toBe("logs/a.log:3:login [EMAIL_1] from [IPV4_1]\n");
    expect(b.input[5].call_id).toBe("call_fake_1");
    expect(b.prompt_cache_key).toBe(body.prompt_cache_key);
    expect(ctx.trace.redactions).toEqual({ email: 3, ipv4: 1 });
  });

  test("Chat: message content, tool-call arguments, tool messages", () => {
    const body = {
      model: "gpt-5",
      messages: [
        { role: "system", content: `Operator contact: ${EMAIL}` },
        { role: "user", content: [{ type: "text", text: `card 4111 1111 1111 1111 for ${EMAIL}` }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "charge", arguments: '{"card":"4111111111111111"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "charged 4111-1111-1111-1111" },
      ],
      tools: [{ type: "function", function: { name: "charge", description: `Support: ${EMAIL}`, parameters: { type: "object" } } }],
    };
    const ctx = ctxFor("openai-chat", body);
    redact(ctx, { enabled: true });
    const b = ctx.body as any;
    expect(b.messages[0].content).toBe("Operator contact: [EMAIL_1]");
    expect(b.messages[1].content[0].text).toBe("card [CARD_1] for [EMAIL_1]");
    expect(b.messages[2].tool_calls[0].function.arguments).toBe('{"card":"[CARD_1]"}');
    expect(b.messages[3].content).toBe("charged [CARD_1]");
    // Tool schemas are not prompt text.
    expect(b.tools[0].function.description).toBe(`Support: ${EMAIL}`);
    expect(ctx.trace.redactions).toEqual({ email: 2, card: 3 });
  });

  test("off (the default) or nothing found: the body and its bytes are untouched, no counts", async () => {
    const body = await clientRequest("claude-code-tool-use-2.json");
    body.messages[0].content.at(-1).text = `mail ${EMAIL}`;
    for (const settings of [undefined, { enabled: false }]) {
      const ctx = ctxFor("anthropic-messages", body);
      const raw = ctx.rawBody;
      redact(ctx, settings);
      expect(ctx.rawBody).toBe(raw);
      expect(ctx.trace.redactions).toBeUndefined();
    }
    const clean = ctxFor("anthropic-messages", await clientRequest("claude-code-tool-use-2.json"));
    const raw = clean.rawBody;
    redact(clean, { enabled: true });
    expect(clean.rawBody).toBe(raw);
    expect(clean.trace.redactions).toBeUndefined();
  });

  test("numbering follows body order, so a growing conversation keeps its placeholders", () => {
    const turn1 = { model: "m", messages: [{ role: "user", content: `a ${EMAIL} b other@corp.example` }] };
    const turn2 = { model: "m", messages: [...turn1.messages, { role: "assistant", content: "noted" }, { role: "user", content: `new third@corp.example and ${EMAIL}` }] };
    const c1 = ctxFor("openai-chat", turn1);
    const c2 = ctxFor("openai-chat", turn2);
    redact(c1, { enabled: true });
    redact(c2, { enabled: true });
    expect((c2.body as any).messages[0]).toEqual((c1.body as any).messages[0]);
    expect((c2.body as any).messages[2].content).toBe("new [EMAIL_3] and [EMAIL_1]");
  });

  test("placeholder-shaped text the prompt holds literally is never given to a value, and is not mapped back", () => {
    // newuser11's tryout: a prompt about templates with a literal [EMAIL_1] and a real address sent two
    // identical [EMAIL_1] upstream, and the echoing reply turned the literal into the address.
    const body = {
      model: "m",
      messages: [
        { role: "system", content: "Fill [EMAIL_2] in templates." },
        { role: "user", content: `My template uses the token [EMAIL_1] literally. Real address: ${EMAIL}; other other@corp.example` },
      ],
    };
    const ctx = ctxFor("openai-chat", body);
    redact(ctx, { enabled: true });
    expect((ctx.body as any).messages.map((m: { content: string }) => m.content)).toEqual([
      "Fill [EMAIL_2] in templates.",
      "My template uses the token [EMAIL_1] literally. Real address: [EMAIL_3]; other [EMAIL_4]",
    ]);
    expect(restoreText(ctx.restoration!, "Echo: [EMAIL_1] [EMAIL_3] [EMAIL_2] [EMAIL_4]")).toBe(`Echo: [EMAIL_1] ${EMAIL} [EMAIL_2] other@corp.example`);
  });
});
