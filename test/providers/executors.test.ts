/**
 * The subscription executors (SPEC P-2, F-9) through the real gateway, asserted on what the fake
 * upstream receives: the Codex backend's body fixes and headers, a non-streaming Chat client served
 * through the forced-streaming Codex provider, and what a Claude subscription call needs (OAuth
 * betas, Claude Code's headers, `?beta=true`, the identity block) — with Claude Code's own requests
 * passing unchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { clientRequest } from "../support/fixtures.ts";
import type { ReceivedRequest } from "../support/fake-upstream.ts";
import { CLAUDE_CODE_IDENTITY } from "../../formats/anthropic-messages/index.ts";

const YAML = `
providers:
  - id: cx
    kind: codex
    base_url: "{{FAKE}}/backend-api/codex"
  - id: cc
    kind: claude-code
    base_url: "{{FAKE}}"
accounts:
  - id: cx-1
    provider: cx
    access_token: env:CX_TOKEN
    account_id: acct-123
  - id: cc-1
    provider: cc
    access_token: env:CC_TOKEN
`;
const ENV = { CX_TOKEN: "cx-access-token-secret", CC_TOKEN: "sk-ant-oat01-test-secret" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV });
});
afterAll(async () => {
  await gw?.stop();
});

const lastPost = (): ReceivedRequest => gw.fake.requests.filter((r) => r.method === "POST").at(-1)!;
const send = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("codex executor", () => {
  test("the body the backend gets: streamed, not stored, list input, instructions present, unsupported fields and foreign state gone", async () => {
    const res = await send("/v1/responses", {
      model: "cx/gpt-5-codex",
      input: "hello",
      max_output_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      previous_response_id: "resp_abc",
      store: true,
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { object: string; status: string; output: Array<{ content?: Array<{ text?: string }> }> };
    expect(json.object).toBe("response");
    const sent = lastPost();
    expect(sent.path).toBe("/backend-api/codex/responses");
    expect(sent.body).toMatchObject({
      model: "gpt-5-codex",
      stream: true,
      store: false,
      instructions: "",
      include: ["reasoning.encrypted_content"],
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] }],
    });
    for (const f of ["max_output_tokens", "temperature", "top_p", "previous_response_id"]) expect(sent.body[f]).toBeUndefined();
    expect(typeof sent.body.prompt_cache_key).toBe("string");
    expect(sent.headers.authorization).toBe(`Bearer ${ENV.CX_TOKEN}`);
    expect(sent.headers["chatgpt-account-id"]).toBe("acct-123");
    expect(sent.headers.originator).toBe("codex_cli_rs");
    expect(sent.headers["openai-beta"]).toBe("responses=experimental");
    expect(sent.headers.session_id).toBe(sent.body.prompt_cache_key);
    expect(sent.headers.accept).toBe("text/event-stream");
  });

  test("system input messages go as developer; the client's session id is the cache key and its Codex headers pass", async () => {
    const res = await send(
      "/v1/responses",
      { model: "cx/gpt-5-codex", stream: true, instructions: "Be brief.", input: [{ role: "system", content: "policy" }, { role: "user", content: "hi" }] },
      { "session-id": "sess-42", originator: "codex_exec" },
    );
    expect(res.status).toBe(200);
    await res.text();
    const sent = lastPost();
    expect(sent.body.instructions).toBe("Be brief.");
    expect(sent.body.input.map((i: { role: string }) => i.role)).toEqual(["developer", "user"]);
    expect(sent.body.prompt_cache_key).toBe("sess-42");
    expect(sent.headers["session-id"]).toBe("sess-42");
    expect(sent.headers.session_id).toBeUndefined();
    expect(sent.headers.originator).toBe("codex_exec");
  });

  test("F-9: a non-streaming Chat client is served through the forced-streaming Codex provider (accumulated)", async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: "cx/gpt-5-codex", messages: [{ role: "system", content: "Be kind." }, { role: "user", content: "hi" }] });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0].message.content).toBe("Hello from the fake upstream.");
    expect(completion.choices[0].finish_reason).toBe("stop");
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
    const sent = lastPost();
    expect(sent.format).toBe("openai-responses");
    expect(sent.stream).toBe(true);
    expect(sent.body.store).toBe(false);
    expect(sent.body.instructions).toBe("");
    expect(sent.body.input[0]).toEqual({ type: "message", role: "developer", content: [{ type: "input_text", text: "Be kind." }] });
  });
});

describe("claude-code executor", () => {
  test("a plain Messages request: OAuth bearer, oauth + claude-code betas, Claude Code's headers, ?beta=true, identity block first", async () => {
    const res = await send("/v1/messages", { model: "cc/claude-sonnet-4-5", max_tokens: 20, system: "Be terse.", messages: [{ role: "user", content: "hi" }] }, { "anthropic-beta": "interleaved-thinking-2025-05-14", "user-agent": "" });
    expect(res.status).toBe(200);
    const sent = lastPost();
    expect(sent.path).toBe("/v1/messages?beta=true");
    expect(sent.headers.authorization).toBe(`Bearer ${ENV.CC_TOKEN}`);
    expect(sent.headers["x-api-key"]).toBeUndefined();
    expect(sent.headers["anthropic-beta"].split(",").sort()).toEqual(["claude-code-20250219", "interleaved-thinking-2025-05-14", "oauth-2025-04-20"]);
    expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent.headers["x-app"]).toBe("cli");
    expect(sent.headers["anthropic-dangerous-direct-browser-access"]).toBe("true");
    expect(sent.headers["user-agent"]).toMatch(/^claude-cli\//);
    expect(sent.body.system).toEqual([{ type: "text", text: CLAUDE_CODE_IDENTITY }, { type: "text", text: "Be terse." }]);
  });

  test("a Chat client through claude-code gets the identity block ahead of its translated system prompt", async () => {
    const res = await send("/v1/chat/completions", { model: "cc/claude-sonnet-4-5", messages: [{ role: "system", content: "Sys." }, { role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const sent = lastPost();
    expect(sent.body.system[0]).toEqual({ type: "text", text: CLAUDE_CODE_IDENTITY });
    expect(JSON.stringify(sent.body.system.slice(1))).toContain("Sys.");
  });

  test("Claude Code's own request passes unchanged (its identity block is already there); its headers are kept", async () => {
    const body = await clientRequest("claude-code-default.json");
    body.model = "cc/claude-opus-5-5";
    body.stream = false;
    const res = await send("/v1/messages?beta=true", body, {
      "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27",
      "user-agent": "claude-cli/2.1.332 (external, sdk-cli)",
      "x-claude-code-session-id": "00000000-0000-4000-8000-000000000001",
    });
    expect(res.status).toBe(200);
    const sent = lastPost();
    expect(sent.body.system).toEqual(body.system);
    expect(sent.body.messages).toEqual(body.messages);
    expect(sent.headers["user-agent"]).toBe("claude-cli/2.1.332 (external, sdk-cli)");
    expect(sent.headers["x-claude-code-session-id"]).toBe("00000000-0000-4000-8000-000000000001");
    expect(sent.headers["anthropic-beta"].split(",").sort()).toEqual(["claude-code-20250219", "context-management-2025-06-27", "interleaved-thinking-2025-05-14", "oauth-2025-04-20"]);
  });

  test("count_tokens on a claude-code target goes upstream the same way (OAuth betas, ?beta=true)", async () => {
    gw.fake.enqueue({ json: { input_tokens: 42 } });
    const res = await send("/v1/messages/count_tokens", { model: "cc/claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] });
    expect(await res.json()).toEqual({ input_tokens: 42 });
    const sent = lastPost();
    expect(sent.path).toBe("/v1/messages/count_tokens?beta=true");
    expect(sent.headers.authorization).toBe(`Bearer ${ENV.CC_TOKEN}`);
    expect(sent.headers["anthropic-beta"]).toContain("oauth-2025-04-20");
  });
});
