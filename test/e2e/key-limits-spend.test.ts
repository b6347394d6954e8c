/**
 * Client key limits (SPEC 9.6) against what requests really spend, through the real gateway:
 * - requests arriving together when a key is a few tokens (or cents) short of a budget or tpm: the
 *   embedded counters hold each request in flight's expected tokens, so one goes and the others are
 *   told to retry when it ends (429, Retry-After 1, in the client's format), instead of every one of
 *   them being served over the limit;
 * - a reply that reached the client but whose provider reported no usage (a Chat stream the client
 *   cancels before the final usage chunk, an upstream that sends none) counts its input estimate (text
 *   characters / 4, a flat 1,000 per image) and the estimate of the output the client got (its text
 *   and tool-argument characters / 4), marked estimated, not a silent zero.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { until as pollUntil } from "../support/until.ts";

const KEYS = {
  tokens: "sy-test-spend-tokens-00000001",
  usd: "sy-test-spend-usd-000000000002",
  tpm: "sy-test-spend-tpm-000000000003",
  cancel: "sy-test-spend-cancel-0000004",
  silent: "sy-test-spend-silent-0000005",
  unpriced: "sy-test-spend-unpriced-00006",
  image: "sy-test-spend-image-000000007",
  cut: "sy-test-spend-cut-00000000010",
  native: "sy-test-spend-native-0000011",
  anthNative: "sy-test-spend-anth-native-012",
  anthChat: "sy-test-spend-anth-chat-00013",
  fresh: "sy-test-spend-usd-fresh-00014",
};

const YAML = `${DEFAULT_YAML}
server: { require_api_key: true }
keys:
  - { name: tokens, key: ${KEYS.tokens}, limits: { budgets: [{ window: 5h, tokens: 100 }] } }
  - { name: usd, key: ${KEYS.usd}, limits: { budgets: [{ window: 1d, usd: 0.05 }] } }
  - { name: tpm, key: ${KEYS.tpm}, limits: { tpm: 100 } }
  - { name: cancel, key: ${KEYS.cancel}, limits: { budgets: [{ window: 5h, tokens: 1000 }] } }
  - { name: silent, key: ${KEYS.silent}, limits: { budgets: [{ window: 5h, tokens: 1000 }] } }
  - { name: unpriced, key: ${KEYS.unpriced}, limits: { budgets: [{ window: 1d, usd: 0.01 }] } }
  - { name: image, key: ${KEYS.image}, limits: { budgets: [{ window: 5h, tokens: 1000000 }] } }
  - { name: cut, key: ${KEYS.cut}, limits: { budgets: [{ window: 5h, tokens: 100000 }] } }
  - { name: native, key: ${KEYS.native}, limits: { budgets: [{ window: 5h, tokens: 100000 }] } }
  - { name: anthNative, key: ${KEYS.anthNative}, limits: { budgets: [{ window: 5h, tokens: 100000 }] } }
  - { name: anthChat, key: ${KEYS.anthChat}, limits: { budgets: [{ window: 5h, tokens: 100000 }] } }
  - { name: fresh, key: ${KEYS.fresh}, limits: { budgets: [{ window: 1d, usd: 0.05 }] } }
  - { name: admin, key: sy-test-spend-admin-00000009, scopes: [admin] }
settings:
  pricing:
    oai/gpt-test: { input: 1000, output: 1000 }   # $0.001 per token
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

const chatBody = (text: string, stream = false) => JSON.stringify({ model: "oai/gpt-test", stream, messages: [{ role: "user", content: text }] });
const chat = (key: string, text = "hi", stream = false) =>
  fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: chatBody(text, stream) });
const messages = (key: string) =>
  fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ model: "oai/gpt-test", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });

/** The upstream answers each request after `ms` with `input`/`output` tokens of usage. */
function slowUpstream(ms: number, input: number, output: number) {
  gw.fake.handle(async (req) => {
    await Bun.sleep(ms);
    return simpleReply(req.format!, { text: "ok", model: req.model, usage: { input, output } }, req.stream);
  });
}

const budgetUse = async (name: string) => {
  const res = await fetch(`${gw.url}/admin/api/keys`, { headers: { authorization: "Bearer sy-test-spend-admin-00000009" } });
  const keys = ((await res.json()) as { keys: any[] }).keys;
  return keys.find((k) => k.name === name).use;
};

/** Polls until `cond` holds; fails after 15 s. */
const until = (cond: () => Promise<boolean>, what: string) => pollUntil(cond, 15_000, what);

/** The key's calls once its request's usage row has been flushed (at least every second, D-1): polled, up to 15 s. */
const usageRows = async (key: string) => {
  gw.app.settle();
  for (const end = Date.now() + 15_000; ; await Bun.sleep(50)) {
    const res = await fetch(`${gw.url}/admin/api/calls?key=${key}&limit=100`, { headers: { authorization: "Bearer sy-test-spend-admin-00000009" } });
    const body = (await res.json()) as any;
    if (body.calls?.length > 0 || Date.now() > end) return body;
  }
};

describe("requests arriving together near a limit", () => {
  test("a token budget 10 short: of 10 concurrent requests one is served, nine get 429 Retry-After 1 in their own format", async () => {
    gw.fake.handle(undefined);
    expect((await chat(KEYS.tokens)).status).toBe(200); // 18 tokens
    slowUpstream(0, 60, 12); // 72 more: 90 of 100 used
    expect((await chat(KEYS.tokens)).status).toBe(200);
    expect((await budgetUse("tokens")).budgets[0].used).toBe(90);

    slowUpstream(300, 60, 12);
    const before = gw.fake.requests.length;
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? messages(KEYS.tokens) : chat(KEYS.tokens))));
    const served = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    expect(served).toHaveLength(1);
    expect(refused).toHaveLength(9);
    expect(gw.fake.requests.length - before).toBe(1);
    for (const r of refused) {
      expect(r.headers.get("retry-after")).toBe("1");
      const body = (await r.json()) as any;
      const message = body.type === "error" ? body.error.message : body.error.message;
      if (body.type === "error") expect(body.error.type).toBe("rate_limit_error");
      else expect(body.error.code).toBe("key_rate_limit_exceeded");
      expect(message).toBe('Client key "tokens" has 1 request in flight that may use the rest of its 5h budget of 100 tokens (90 tokens used); retry when one finishes (in about 1 s, at ' + message.match(/at (\S+Z)\)\./)![1] + ").");
    }
    await Promise.all(served.map((r) => r.text()));
    // over by the one request served, not by ten
    expect((await budgetUse("tokens")).budgets[0].used).toBe(162);
    const after = await chat(KEYS.tokens);
    expect(after.status).toBe(429);
    expect(((await after.json()) as any).error.code).toBe("key_budget_exceeded");
    // The ten refusals have usage rows but no usage: GET /admin/api/usage counts them as refused (the
    // key's own limit at work), not as errors, and none of them as estimated.
    const res = await fetch(`${gw.url}/admin/api/usage?by=key&since=1h`, { headers: { authorization: "Bearer sy-test-spend-admin-00000009" } });
    const row = ((await res.json()) as any).rows.find((r: any) => r.group === "tokens");
    expect([row.requests, row.errors, row.refused, row.estimated]).toEqual([13, 0, 10, 0]);
    gw.fake.handle(undefined);
  });

  test("a USD budget a few cents short: concurrent requests are held to what the window's spend per token predicts", async () => {
    slowUpstream(0, 20, 10); // $0.03 per request
    expect((await chat(KEYS.usd)).status).toBe(200);
    slowUpstream(300, 20, 10);
    const before = gw.fake.requests.length;
    const replies = await Promise.all(Array.from({ length: 8 }, () => chat(KEYS.usd)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(gw.fake.requests.length - before).toBe(1);
    await Promise.all(replies.map((r) => r.text()));
    expect((await budgetUse("usd")).budgets[0].used).toBeCloseTo(0.06, 10);
    gw.fake.handle(undefined);
  });

  test("a fresh USD budget ($0.05, nothing spent yet): of five streams sent together two run, three get 429 Retry-After 1 in their own format; the window ends $0.01 over, not $0.10", async () => {
    // Each body is 20-25 tokens at the model's $0.001 per token: $0.02-0.025 held while it runs. Before,
    // a USD budget held nothing until a priced request had settled in its window, and all five ran.
    slowUpstream(300, 20, 10); // $0.03 per request
    const stream = (i: number) =>
      i % 2
        ? fetch(`${gw.url}/v1/messages`, {
            method: "POST",
            headers: { "x-api-key": KEYS.fresh, "content-type": "application/json" },
            body: JSON.stringify({ model: "oai/gpt-test", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
          })
        : chat(KEYS.fresh, "hi", true);
    const before = gw.fake.requests.length;
    const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => stream(i)));
    const served = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    expect([served.length, refused.length]).toEqual([2, 3]);
    expect(gw.fake.requests.length - before).toBe(2);
    for (const r of refused) {
      expect(r.headers.get("retry-after")).toBe("1");
      const body = (await r.json()) as any;
      if (body.type === "error") expect(body.error.type).toBe("rate_limit_error");
      else expect(body.error.code).toBe("key_rate_limit_exceeded");
      expect(body.error.message).toStartWith('Client key "fresh" has 2 requests in flight that may use the rest of its 1d budget of $0.0500 ($0.00 used); retry when one finishes');
    }
    for (const r of served) expect(await r.text()).toContain("ok");
    await until(async () => Math.abs((await budgetUse("fresh")).budgets[0].used - 0.06) < 1e-9, "the two streams' $0.06 in the key's budget");
    const after = await chat(KEYS.fresh);
    expect(after.status).toBe(429);
    const spent = (await after.json()) as any;
    expect(spent.error.code).toBe("key_budget_exceeded");
    expect(spent.error.message).toStartWith('Client key "fresh" has used its 1d budget of $0.0500 ($0.0600 used)');
    gw.fake.handle(undefined);
  });

  test("tpm: requests in flight count against the minute", async () => {
    slowUpstream(0, 30, 10);
    expect((await chat(KEYS.tpm)).status).toBe(200); // 40 of 100 this minute; the key's mean is 40
    slowUpstream(300, 30, 10);
    const replies = await Promise.all(Array.from({ length: 6 }, () => chat(KEYS.tpm)));
    // 40 used + 40 expected of the first in flight ≤ 100; a second would make 120
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    const refused = replies.find((r) => r.status === 429)!;
    expect(((await refused.json()) as any).error.message).toStartWith('Client key "tpm" has 1 request in flight that may use the rest of its 100 tokens per minute (tpm; 40 used)');
    await Promise.all(replies.filter((r) => !r.bodyUsed).map((r) => r.text()));
    gw.fake.handle(undefined);
  });
});

describe("a served reply without usage counts its input estimate and the estimate of the output sent", () => {
  test("a Chat stream the client cancels before the usage chunk: its body's and its reply text's characters / 4 are counted and marked estimated", async () => {
    // The stream's text arrives, then the usage chunk would come 5 s later: the client leaves first.
    gw.fake.handle((req) => {
      const sse = simpleReply("openai-chat", { text: "one two three", model: req.model, usage: { input: 500, output: 100 } }, true).sse!;
      const cut = sse.indexOf('"choices":[]');
      return { sse, split_at: [sse.lastIndexOf("data:", cut)], delay_ms: 5000 };
    });
    const text = "x".repeat(2000);
    const body = chatBody(text, true);
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.cancel}`, "content-type": "application/json" },
      body,
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes('"finish_reason":"stop"')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    await reader.closed.catch(() => {});
    const expected = Math.ceil(text.length / 4);
    const output = Math.ceil("one two three".length / 4);
    let use: any;
    for (let i = 0; i < 50 && !(use = await budgetUse("cancel")).budgets[0].used; i++) await Bun.sleep(50);
    expect(use.budgets[0].used).toBe(expected + output);
    const { calls } = await usageRows("cancel");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ keyName: "cancel", outcome: "client_closed", estimated: true, usage: { inputTokens: expected, outputTokens: output } });
    expect(calls[0].costUsd).toBeCloseTo((expected + output) * 0.001, 10);
    gw.fake.handle(undefined);
  });

  test("a Chat stream the upstream cuts before its usage, to a Messages client (translated): the text and tool arguments sent count as estimated output", async () => {
    const args = { path: "src/app.ts", line: 42 };
    gw.fake.handle((req) => {
      const sse = simpleReply("openai-chat", { text: "Let me look.", model: req.model, toolCalls: [{ id: "call_1", name: "read", arguments: args }] }, true).sse!;
      // The connection breaks right before the finish_reason chunk: no usage ever arrives.
      return { sse, reset_after_bytes: sse.lastIndexOf("data:", sse.indexOf('"finish_reason":"tool_calls"')) };
    });
    const text = "z".repeat(800);
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": KEYS.cut, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "oai/gpt-test", max_tokens: 50, stream: true, messages: [{ role: "user", content: text }] }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain("event: error");
    const { calls } = await usageRows("cut");
    expect(calls).toHaveLength(1);
    const output = Math.ceil(("Let me look.".length + JSON.stringify(args).length) / 4);
    expect(calls[0]).toMatchObject({ keyName: "cut", outcome: "upstream_error", estimated: true, usage: { outputTokens: output } });
    expect(calls[0].usage.inputTokens).toBeGreaterThanOrEqual(200);
    expect((await budgetUse("cut")).budgets[0].used).toBe(calls[0].usage.inputTokens + output);
    gw.fake.handle(undefined);
  });

  test("a Chat stream the upstream cuts before its usage, to a Chat client (the native passthrough): the text and tool arguments forwarded count as estimated output", async () => {
    const args = { path: "src/app.ts", line: 42 };
    gw.fake.handle((req) => {
      const sse = simpleReply("openai-chat", { text: "Let me look.", model: req.model, toolCalls: [{ id: "call_1", name: "read", arguments: args }] }, true).sse!;
      return { sse, reset_after_bytes: sse.lastIndexOf("data:", sse.indexOf('"finish_reason":"tool_calls"')) };
    });
    const text = "n".repeat(1200);
    const res = await chat(KEYS.native, text, true);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('"upstream_connection_lost"');
    const { calls } = await usageRows("native");
    expect(calls).toHaveLength(1);
    const output = Math.ceil(("Let me look.".length + JSON.stringify(args).length) / 4);
    expect(calls[0]).toMatchObject({ keyName: "native", outcome: "upstream_error", estimated: true, usage: { outputTokens: output } });
    expect(calls[0].usage.inputTokens).toBeGreaterThanOrEqual(300);
    expect(calls[0].costUsd).toBeCloseTo((calls[0].usage.inputTokens + output) * 0.001, 10);
    expect((await budgetUse("native")).budgets[0].used).toBe(calls[0].usage.inputTokens + output);
    gw.fake.handle(undefined);
  });

  /** An Anthropic stream of `text` cut right before its message_delta: the only usage it reported is message_start's (500 in, 1 out). */
  const anthropicCutBeforeUsage = (text: string) =>
    gw.fake.handle((req) => {
      const sse = simpleReply("anthropic-messages", { text, model: req.model, usage: { input: 500, output: 100 } }, true).sse!;
      return { sse, reset_after_bytes: sse.indexOf("event: message_delta") };
    });
  const TEXT = "The answer takes a few sentences. Every one of them reached the client before the cut.";

  test("an Anthropic stream cut after its usage began, to a Messages client (the native passthrough): the output sent counts, not message_start's 1", async () => {
    anthropicCutBeforeUsage(TEXT);
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": KEYS.anthNative, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "anth/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain("event: error");
    const { calls } = await usageRows("anthNative");
    expect(calls).toHaveLength(1);
    const output = Math.ceil(TEXT.length / 4);
    // The input is the provider's own (message_start); the output is an estimate, and the row says so.
    expect(calls[0]).toMatchObject({ keyName: "anthNative", outcome: "upstream_error", estimated: true, usage: { inputTokens: 500, outputTokens: output } });
    expect((await budgetUse("anthNative")).budgets[0].used).toBe(500 + output);
    gw.fake.handle(undefined);
  });

  test("the same stream to a Chat client (translated): the output sent counts", async () => {
    anthropicCutBeforeUsage(TEXT);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.anthChat}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "anth/claude-x", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"upstream_connection_lost"');
    const { calls } = await usageRows("anthChat");
    expect(calls).toHaveLength(1);
    const output = Math.ceil(TEXT.length / 4);
    expect(calls[0]).toMatchObject({ keyName: "anthChat", outcome: "upstream_error", estimated: true, usage: { inputTokens: 500, outputTokens: output } });
    expect((await budgetUse("anthChat")).budgets[0].used).toBe(500 + output);
    gw.fake.handle(undefined);
  });

  test("an upstream that never reports usage: each reply counts its input estimate, and the budget ends", async () => {
    gw.fake.handle((req) => {
      const reply = simpleReply("openai-chat", { text: "fine", model: req.model }, false);
      delete (reply.json as any).usage;
      return reply;
    });
    const text = "y".repeat(1600);
    const per = Math.ceil(text.length / 4) + Math.ceil("fine".length / 4);
    let served = 0;
    for (let i = 0; i < 10; i++) {
      const r = await chat(KEYS.silent, text);
      await r.text();
      if (r.status !== 200) {
        expect(r.status).toBe(429);
        break;
      }
      served++;
    }
    expect(served).toBe(Math.ceil(1000 / per));
    expect((await budgetUse("silent")).budgets[0].used).toBe(served * per);
    gw.fake.handle(undefined);
  });

  test("an image is counted as one image (1,000 tokens), not by the size of its base64", async () => {
    gw.fake.handle((req) => {
      const reply = simpleReply("openai-chat", { text: "a cat", model: req.model }, false);
      delete (reply.json as any).usage;
      return reply;
    });
    const image = `data:image/png;base64,${"iVBORw0KGgo".repeat(40_000)}`; // ~440 KB
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.image}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: image } }] }] }),
    });
    expect(r.status).toBe(200);
    await r.text();
    expect((await budgetUse("image")).budgets[0].used).toBe(Math.ceil("what is this?".length / 4) + 1000 + Math.ceil("a cat".length / 4));
    gw.fake.handle(undefined);
  });
});

describe("a USD budget and a model without a price", () => {
  test("the requests are recorded unpriced, the budget cannot count them, and the log says so once per key and model", async () => {
    // chat/gpt-unknown-model has no price anywhere (no override, not in the price table)
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEYS.unpriced}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "chat/gpt-unknown-model", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(r.status).toBe(200);
      await r.text();
    }
    const warnings = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.level === "warn" && l.key === "unpriced");
    expect(warnings).toEqual([
      {
        level: "warn",
        time: expect.any(Number),
        msg: "a key with a USD budget used a model that has no price (to serve a request or in a failed attempt): what that model used is not counted against the budget; give the model a price in settings.pricing",
        key: "unpriced",
        model: "chat/gpt-unknown-model",
      },
    ]);
    expect((await budgetUse("unpriced")).budgets[0].used).toBe(0);
    // try18 D17: the budget's use says how many requests of its window it could not count (only the
    // log said so), counted by the key's counters as each request settles (review19 R5)
    expect((await budgetUse("unpriced")).budgets[0]).toMatchObject({ used: 0, unpriced: 3 });
    // a priced key's USD budget counts every request: none left out
    expect((await budgetUse("usd")).budgets[0].unpriced ?? 0).toBe(0);
  });
});

describe("a restart", () => {
  test("keeps a spent budget window: the key is still refused, with the same reset time", async () => {
    const yaml = `${DEFAULT_YAML}
server: { require_api_key: true }
keys:
  - { name: once, key: sy-test-spend-restart-000001, limits: { budgets: [{ window: 1d, tokens: 10 }] } }
`;
    const first = await startGateway(yaml);
    const ask = (g: TestGateway) =>
      fetch(`${g.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sy-test-spend-restart-000001", "content-type": "application/json" }, body: chatBody("hi") });
    try {
      expect((await ask(first)).status).toBe(200); // 18 tokens of 10
      const before = await ask(first);
      expect(before.status).toBe(429);
      const resetAt = (((await before.json()) as any).error.message as string).match(/at (\S+Z)\)/)![1];
      await first.stopGatewayOnly();
      const second = await startGateway(yaml, { dataDir: first.dataDir, fake: first.fake });
      try {
        const after = await ask(second);
        expect(after.status).toBe(429);
        const body = (await after.json()) as any;
        expect(body.error.code).toBe("key_budget_exceeded");
        expect(body.error.message).toContain(`(18 tokens used)`);
        expect(body.error.message).toContain(`at ${resetAt})`);
      } finally {
        await second.stop();
      }
    } finally {
      await first.fake.stop().catch(() => {});
    }
  });
});
