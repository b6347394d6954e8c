/**
 * translate (SPEC R-5, F-3, F-8): which body each target gets — the client's bytes for the exact native
 * pairs, a tidied body for same-format third parties, the hub for everything else — and the
 * portability policy for reasoning state from another provider family.
 */
import { describe, expect, test } from "bun:test";
import type { ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { ProviderInfo } from "../../pipeline/ports.ts";
import type { Target } from "../../pipeline/resolve.ts";
import { isNativePair, translate, type Translated } from "../../pipeline/translate.ts";
import { CLAUDE_CODE_IDENTITY } from "../../formats/anthropic-messages/index.ts";
import { clientRequest } from "../support/fixtures.ts";

const FORMAT: Record<ProviderKind, WireFormat> = {
  anthropic: "anthropic-messages",
  "claude-code": "anthropic-messages",
  "anthropic-compatible": "anthropic-messages",
  openai: "openai-chat",
  "openai-compatible": "openai-chat",
  "openai-responses": "openai-responses",
  codex: "openai-responses",
  gemini: "gemini",
};
const FAMILY: Record<ProviderKind, string> = {
  anthropic: "anthropic",
  "claude-code": "anthropic",
  "anthropic-compatible": "provider:x",
  openai: "openai",
  "openai-compatible": "provider:y",
  "openai-responses": "openai",
  codex: "openai",
  gemini: "gemini",
};

function target(kind: ProviderKind, model = "up-model", extra: Partial<Target> = {}): Target {
  const provider = {
    id: `p-${kind}`,
    kind,
    format: FORMAT[kind],
    family: FAMILY[kind],
    baseUrl: "http://127.0.0.1:9",
    models: {},
    idleTimeoutMs: 60_000,
    headerTimeoutMs: 60_000,
    source: "config",
  } as ProviderInfo;
  return { provider, model, label: `${provider.id}/${model}`, ...extra };
}

function ctx(clientFormat: WireFormat, body: Record<string, unknown>, raw?: string): RequestContext {
  const text = raw ?? JSON.stringify(body);
  return {
    clientFormat,
    rawBody: new TextEncoder().encode(text),
    body,
    requestedModel: String(body.model),
    stream: body.stream === true,
    includeUsage: false,
    warnings: [],
    trace: { decisions: [], attempts: [], warnings: [] },
  } as unknown as RequestContext;
}

const ok = (t: ReturnType<typeof translate>): Translated => {
  if ("kind" in t) throw new Error(`unexpected error: ${t.message}`);
  return t;
};
const bodyOf = (t: Translated) => JSON.parse(typeof t.body === "string" ? t.body : new TextDecoder().decode(t.body));
const anthropicBody = { model: "up-model", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };

describe("native pairs (SPEC F-3)", () => {
  test("the list is exact", () => {
    expect(isNativePair("anthropic-messages", "anthropic")).toBe(true);
    expect(isNativePair("anthropic-messages", "claude-code")).toBe(true);
    expect(isNativePair("anthropic-messages", "anthropic-compatible")).toBe(false);
    expect(isNativePair("openai-chat", "openai")).toBe(true);
    expect(isNativePair("openai-chat", "openai-compatible")).toBe(false);
    expect(isNativePair("openai-responses", "openai-responses")).toBe(true);
    expect(isNativePair("openai-chat", "gemini")).toBe(false);
  });

  test("same model, nothing to change: the client's exact bytes (spacing and key order included)", () => {
    const raw = '{ "model":"up-model",  "messages":[{"role":"user","content":"hi"}], "max_tokens":50 }';
    const c = ctx("anthropic-messages", JSON.parse(raw), raw);
    const t = ok(translate(c, target("anthropic"), "strip_with_warning"));
    expect(t.mode).toBe("native");
    expect(t.body).toBe(c.rawBody);
  });

  test("another upstream model id: only `model` changes", () => {
    const c = ctx("anthropic-messages", { ...anthropicBody, model: "anthropic/alias-name" });
    const t = ok(translate(c, target("anthropic", "claude-real"), "strip_with_warning"));
    expect(t.mode).toBe("native");
    expect(bodyOf(t)).toEqual({ ...anthropicBody, model: "claude-real" });
  });

  test("a streaming Chat request gets stream_options.include_usage upstream (F-3)", () => {
    const c = ctx("openai-chat", { model: "up-model", stream: true, messages: [{ role: "user", content: "hi" }] });
    const t = ok(translate(c, target("openai"), "strip_with_warning"));
    expect(bodyOf(t).stream_options).toEqual({ include_usage: true });
  });

  test("the usage option is put in front of the client's own bytes (spacing, key order and a BOM-less body kept)", () => {
    const raw = '\n { "model":"up-model", "stream":true,\t"messages":[{"role":"user","content":"héllo \\u00e9"}] }';
    const t = ok(translate(ctx("openai-chat", JSON.parse(raw), raw), target("openai"), "strip_with_warning"));
    expect(new TextDecoder().decode(t.body as Uint8Array)).toBe('{"stream_options":{"include_usage":true}, "model":"up-model", "stream":true,\t"messages":[{"role":"user","content":"héllo \\u00e9"}] }');
    expect(bodyOf(t)).toEqual({ stream_options: { include_usage: true }, ...JSON.parse(raw) });
    // A UTF-8 byte order mark before the object is dropped with the whitespace; the rest is byte for byte.
    const bom = ok(translate(ctx("openai-chat", JSON.parse(raw), "\uFEFF" + raw), target("openai"), "strip_with_warning"));
    expect(Buffer.from(bom.body as Uint8Array).toString("utf8")).toBe('{"stream_options":{"include_usage":true}, "model":"up-model", "stream":true,\t"messages":[{"role":"user","content":"héllo \\u00e9"}] }');
    // No whitespace before the brace, and more whitespace than the inserted member is long: the same bytes.
    for (const lead of ["", " ".repeat(39), " ".repeat(40), " ".repeat(41), "\uFEFF" + "\n".repeat(80)]) {
      const spaced = ok(translate(ctx("openai-chat", JSON.parse(raw), lead + raw), target("openai"), "strip_with_warning"));
      expect(new TextDecoder().decode(spaced.body as Uint8Array)).toBe('{"stream_options":{"include_usage":true}, "model":"up-model", "stream":true,\t"messages":[{"role":"user","content":"héllo \\u00e9"}] }');
    }
  });

  test("stream_options the client sent (without include_usage) are kept and include_usage added", () => {
    const body = { model: "up-model", stream: true, stream_options: { chunk_size: 3 }, messages: [{ role: "user", content: "hi" }] };
    const t = ok(translate(ctx("openai-chat", body), target("openai"), "strip_with_warning"));
    expect(bodyOf(t)).toEqual({ ...body, stream_options: { chunk_size: 3, include_usage: true } });
  });

  test("combo target params are merged into the upstream body", () => {
    const c = ctx("anthropic-messages", anthropicBody);
    const t = ok(translate(c, target("anthropic", "up-model", { params: { temperature: 0.2 } }), "strip_with_warning"));
    expect(bodyOf(t).temperature).toBe(0.2);
  });
});

describe("a body too deeply nested to re-encode (SPEC G-4)", () => {
  // JSON.parse takes 100,000 levels; JSON.stringify gives up at 40,000 (one case only, it costs seconds
  // of CPU): the native lane re-encodes the body for another model id, and that used to throw out of
  // translate into the gateway's 500. The cost is JavaScriptCore's, fixed for any body it refuses
  // (measured with Bun 1.4.5, 2026-12-03): its recursive stringifier runs out of native stack near
  // 26,500 levels and the general one starts again from the top, checking each level against every
  // level above it (~0.6 s of CPU to 27,000 levels, ~1.7 s to 38,000) until its own limit of 40,000
  // held values throws the RangeError; no body throws at fewer levels, and eating the
  // native stack before the call (tried: 98 % of it) left the cost unchanged.
  test("is a 400 invalid_request in the client's format, never a throw", () => {
    const body = { model: "oai/alias", messages: [{ role: "user", content: "hi" }], metadata: JSON.parse("[".repeat(100_000) + "]".repeat(100_000)) as unknown };
    let t: ReturnType<typeof translate> | undefined;
    expect(() => (t = translate(ctx("openai-chat", body, "{}"), target("openai"), "strip_with_warning"))).not.toThrow();
    expect(t && "kind" in t ? [t.kind, t.status, t.message] : t).toEqual(["invalid_request", 400, "The request body is nested too deeply to be forwarded (JSON nesting beyond what the gateway re-encodes)."]);
  }, 180_000); // CPU-bound: 1.4 s quiet, 1.6–2.4 s at load 18–24, 69 s once at load 35–50 (past the 60 s it had)
});

describe("Codex (SPEC P-2, F-9): the Responses codec's Codex fixes, one implementation", () => {
  const withHeaders = (c: RequestContext, headers: Record<string, string>) => ({ ...c, request: new Request("http://x/v1/responses", { method: "POST", headers }) }) as RequestContext;

  test("a native Responses body: as the client sent it with only the Codex fixes; the reply still passes through", () => {
    const body = { model: "up-model", input: [{ role: "system", content: "p" }, { role: "user", content: "hi", id: "msg_1" }], temperature: 0.3, client_metadata: { a: 1 } };
    const t = ok(translate(withHeaders(ctx("openai-responses", body), { "session-id": "sess-9" }), target("codex", "gpt-5-codex"), "strip_with_warning"));
    expect(t.mode).toBe("native");
    expect(t.upstreamStream).toBe(true);
    expect(t.promptCacheKey).toBe("sess-9");
    expect(bodyOf(t)).toEqual({
      model: "gpt-5-codex",
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
      instructions: "",
      input: [{ role: "developer", content: "p" }, { role: "user", content: "hi", id: "msg_1" }],
      client_metadata: { a: 1 },
      prompt_cache_key: "sess-9",
    });
    expect(t.warnings.map((w) => w.code)).toEqual(["dropped_field"]);
  });

  test("the client's prompt_cache_key wins; without one or a session a stable hash of the opening is used", () => {
    const own = ok(translate(withHeaders(ctx("openai-responses", { model: "m", input: "hi", prompt_cache_key: "own" }), { "session-id": "s" }), target("codex"), "strip_with_warning"));
    expect(own.promptCacheKey).toBe("own");
    const turn1 = { model: "m", messages: [{ role: "user", content: "hi" }] };
    const turn2 = { model: "m", messages: [...turn1.messages, { role: "assistant", content: "yo" }, { role: "user", content: "more" }] };
    const a = ok(translate(withHeaders(ctx("openai-chat", turn1), {}), target("codex"), "strip_with_warning"));
    const b = ok(translate(withHeaders(ctx("openai-chat", turn2), {}), target("codex"), "strip_with_warning"));
    expect(a.promptCacheKey).toMatch(/^sy-[0-9a-f]{32}$/);
    expect(bodyOf(a).prompt_cache_key).toBe(a.promptCacheKey!);
    expect(a.mode).toBe("hub");
    expect(b.promptCacheKey).toBe(a.promptCacheKey!); // later turns keep the conversation's key
    const other = ok(translate(withHeaders(ctx("openai-chat", { model: "m", messages: [{ role: "user", content: "other" }] }), {}), target("codex"), "strip_with_warning"));
    expect(other.promptCacheKey).not.toBe(a.promptCacheKey!);
  });

  test("combo params cannot bring back a field the Codex backend refuses", () => {
    const params = { temperature: 0.2, reasoning: { effort: "high" } };
    for (const c of [ctx("openai-responses", { model: "m", input: "hi" }), ctx("openai-chat", { model: "m", messages: [{ role: "user", content: "hi" }] })]) {
      const t = ok(translate(withHeaders(c, {}), target("codex", "up-model", { params }), "strip_with_warning"));
      expect(bodyOf(t).temperature).toBeUndefined();
      expect(bodyOf(t).reasoning).toEqual({ effort: "high" });
    }
  });
});

describe("Claude Code (SPEC P-2): the identity line only when missing", () => {
  test("Claude Code's own body (identity present) keeps its exact bytes", async () => {
    const body = await clientRequest("claude-code-default.json");
    const raw = JSON.stringify(body);
    const c = ctx("anthropic-messages", body, raw);
    const t = ok(translate(c, target("claude-code", body.model), "strip_with_warning"));
    expect(t.mode).toBe("native");
    expect(t.body).toBe(c.rawBody);
  });

  test("another client's body gets the block first through the tidy pass; the reply still passes through", () => {
    const c = ctx("anthropic-messages", { ...anthropicBody, system: "Be terse." });
    const t = ok(translate(c, target("claude-code"), "strip_with_warning"));
    expect(t.mode).toBe("native");
    expect(bodyOf(t).system).toEqual([{ type: "text", text: CLAUDE_CODE_IDENTITY }, { type: "text", text: "Be terse." }]);
    expect(bodyOf(t).messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
  });
});

describe("same format, third-party server: tidied (F-3)", () => {
  test("anthropic-compatible gets the tidy path with the target model", () => {
    const c = ctx("anthropic-messages", { ...anthropicBody, system: [{ type: "text", text: "" }] });
    const t = ok(translate(c, target("anthropic-compatible", "glm-x"), "strip_with_warning"));
    expect(t.mode).toBe("tidy");
    expect(bodyOf(t).model).toBe("glm-x");
  });
});

describe("several choices (Chat n, Gemini candidateCount)", () => {
  const chatBody = { model: "up-model", messages: [{ role: "user", content: "hi" }], n: 3 };
  const geminiBody = { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { candidateCount: 2 } };
  const refusal = (t: ReturnType<typeof translate>) => ("kind" in t ? [t.kind, t.status, t.param] : t.mode);

  test("pass through to the client's own API, where every choice reaches the client", () => {
    expect(ok(translate(ctx("openai-chat", chatBody), target("openai"), "strip_with_warning")).mode).toBe("native");
    expect(ok(translate(ctx("gemini", geminiBody), target("gemini"), "strip_with_warning")).mode).toBe("native");
  });

  test("through translation or reply normalisation (one choice comes back) are a 400 naming the field, never one choice silently", () => {
    for (const kind of ["openai-compatible", "anthropic", "openai-responses", "gemini"] as const) {
      expect(refusal(translate(ctx("openai-chat", chatBody), target(kind), "strip_with_warning"))).toEqual(["invalid_request", 400, "n"]);
    }
    for (const kind of ["openai", "anthropic", "openai-responses"] as const) {
      const t = translate(ctx("gemini", geminiBody), target(kind), "strip_with_warning");
      expect(refusal(t)).toEqual(["invalid_request", 400, "generationConfig.candidateCount"]);
      // Gemini's error shape has no param: the message names the field the client sent, not Chat's n
      expect("kind" in t && t.message).toStartWith("generationConfig.candidateCount=2 (several candidates)");
      expect("kind" in t && t.message).not.toContain("n=");
    }
    const chat = translate(ctx("openai-chat", chatBody), target("anthropic"), "strip_with_warning");
    expect("kind" in chat && chat.message).toStartWith("n=3 (several choices)");
    expect("kind" in chat && chat.message).toContain("is reached through translation, which returns one choice");
    // a provider of the client's own API that is not OpenAI itself: normalised, not translated
    const compatible = translate(ctx("openai-chat", chatBody), target("openai-compatible"), "strip_with_warning");
    expect("kind" in compatible && compatible.message).toContain("is a third-party provider whose replies are normalised, which returns one choice");
    expect("kind" in compatible && compatible.message).not.toContain("translation");
  });

  test("n=1 (or none) is translated as usual", () => {
    expect(ok(translate(ctx("openai-chat", { ...chatBody, n: 1 }), target("anthropic"), "strip_with_warning")).mode).toBe("hub");
    expect(ok(translate(ctx("gemini", { ...geminiBody, generationConfig: { candidateCount: 1 } }), target("openai"), "strip_with_warning")).mode).toBe("hub");
  });
});

describe("through the hub", () => {
  test("Anthropic client → Chat provider: a Chat body", () => {
    const c = ctx("anthropic-messages", anthropicBody);
    const t = ok(translate(c, target("openai-compatible", "glm-x"), "strip_with_warning"));
    expect(t.mode).toBe("hub");
    expect(t.upstreamFormat).toBe("openai-chat");
    expect(bodyOf(t)).toMatchObject({ model: "glm-x", messages: [{ role: "user", content: "hi" }] });
  });

  test("previous_response_id to a provider that does not hold it is a 400 naming the field (B41)", () => {
    const c = ctx("openai-responses", { model: "up-model", input: "hi", previous_response_id: "resp_1" });
    const t = translate(c, target("openai-compatible"), "strip_with_warning");
    expect("kind" in t && t.status).toBe(400);
    expect("kind" in t && t.param).toBe("previous_response_id");
  });

  test("a tool_choice naming a function two Codex namespaces declare is a 400 naming them for a provider without namespaces, sent on to a Responses one", () => {
    const ns = (name: string) => ({ type: "namespace", name, description: name, tools: [{ type: "function", name: "search", parameters: { type: "object", properties: {} } }] });
    const c = ctx("openai-responses", { model: "up-model", input: "hi", tools: [ns("docs"), ns("web")], tool_choice: { type: "function", name: "search" } });
    for (const kind of ["anthropic", "openai-compatible", "gemini"] as const) {
      const t = translate(c, target(kind), "strip_with_warning");
      expect("kind" in t && t.status).toBe(400);
      expect("kind" in t && t.param).toBe("tool_choice");
      expect("kind" in t && t.message).toContain('namespaces "docs" and "web"');
    }
    expect(bodyOf(ok(translate(c, target("openai-responses"), "strip_with_warning")))).toMatchObject({ tool_choice: { type: "function", name: "search" } });
  });
});

describe("portability of reasoning state (SPEC F-8)", () => {
  const withForeignSignature = {
    model: "up-model",
    max_tokens: 100,
    messages: [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hmm", signature: "sy|gemini|CsYBAdHt" },
          { type: "text", text: "hello" },
        ],
      },
      { role: "user", content: "more" },
    ],
  };

  test("strip_with_warning removes state another family issued and says so", () => {
    const c = ctx("anthropic-messages", withForeignSignature);
    const t = ok(translate(c, target("openai-compatible"), "strip_with_warning"));
    expect(t.warnings.map((w) => w.code)).toContain("stripped_reasoning_state");
    expect(JSON.stringify(bodyOf(t))).not.toContain("CsYBAdHt");
  });

  test("reject answers 400 instead", () => {
    const c = ctx("anthropic-messages", withForeignSignature);
    const t = translate(c, target("openai-compatible"), "reject");
    expect("kind" in t && t.status).toBe(400);
    expect("kind" in t && t.code).toBe("non_portable_reasoning_state");
  });

  test("the issuing family gets it back untouched", () => {
    const c = ctx("anthropic-messages", withForeignSignature);
    const t = ok(translate(c, target("gemini", "gemini-x"), "reject"));
    expect(JSON.stringify(bodyOf(t))).toContain("CsYBAdHt");
  });
});
