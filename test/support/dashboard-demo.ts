/**
 * A gateway with realistic state for the dashboard's browser tests and its README screenshot: three
 * providers in front of the fake upstream, four accounts, a combo and an alias, some traffic with
 * quota-window headers (Claude's unified 5h / 7d windows), a rate-limited model cooling down and a
 * rejected key that locks an account.
 */
import type { FakeReply, ReceivedRequest } from "./fake-upstream.ts";
import { simpleReply } from "./fake-upstream.ts";
import { startGateway, type TestGateway } from "./gateway.ts";
import { providersAtFake } from "./configs.ts";

/** The upstream secrets of the demo accounts (env values the config reads). */
export const DEMO_ENV = {
  CLAUDE_WORK: "sk-demo-claude-work-0001",
  CLAUDE_PERSONAL: "sk-demo-claude-personal-0002",
  OPENAI_MAIN: "sk-demo-openai-main-0003",
  GLM_MAIN: "sk-demo-glm-main-0004",
};

export const DEMO_YAML = `
${providersAtFake(["claude", "anthropic"])}
    models:
      claude-sonnet-4-5: { context_window: 200000, images: true }
      claude-opus-4-1: { context_window: 200000, images: true }
  - id: openai
    kind: openai
    base_url: "{{FAKE}}/v1"
    models:
      gpt-5: { context_window: 400000 }
      gpt-5-mini: { context_window: 400000 }
  - id: glm
    kind: anthropic-compatible
    base_url: "{{FAKE}}/glm"
    models:
      glm-5.3: { context_window: 200000 }
accounts:
  - { id: claude-work, provider: claude, api_key: "env:CLAUDE_WORK", priority: 0, max_concurrency: 4 }
  - { id: claude-personal, provider: claude, api_key: "env:CLAUDE_PERSONAL", priority: 1, max_concurrency: 2 }
  - { id: openai-main, provider: openai, api_key: "env:OPENAI_MAIN" }
  - { id: glm-main, provider: glm, api_key: "env:GLM_MAIN" }
combos:
  - name: coding
    strategy: fallback
    targets:
      - model: claude/claude-sonnet-4-5
      - model: openai/gpt-5
      - model: glm/glm-5.3
aliases:
  fast: openai/gpt-5-mini
`;

/** Which demo account a fake-upstream request came with. */
export function demoAccount(r: ReceivedRequest): string {
  const key = r.headers["x-api-key"] ?? r.headers["authorization"]?.replace(/^Bearer /, "");
  const found = Object.entries(DEMO_ENV).find(([, v]) => v === key)?.[0] ?? "?";
  return found.toLowerCase().replace("_", "-");
}

/** Claude's unified quota headers: `used5h` and `used7d` as fractions, resets in `h5`/`d7` ms from now. */
export function unifiedHeaders(used5h: number, used7d: number, reset5hMs: number, reset7dMs: number): Record<string, string> {
  const now = Date.now();
  return {
    "anthropic-ratelimit-unified-status": "allowed",
    "anthropic-ratelimit-unified-5h-utilization": String(used5h),
    "anthropic-ratelimit-unified-5h-reset": String(Math.floor((now + reset5hMs) / 1000)),
    "anthropic-ratelimit-unified-5h-status": "allowed",
    "anthropic-ratelimit-unified-7d-utilization": String(used7d),
    "anthropic-ratelimit-unified-7d-reset": String(Math.floor((now + reset7dMs) / 1000)),
    "anthropic-ratelimit-unified-7d-status": "allowed",
  };
}

/** Per-account queues of scripted replies; an empty queue answers normally. */
export type DemoScript = Record<string, FakeReply[]>;

/** Starts the demo gateway; `script` is consulted for every upstream request. */
export async function startDemoGateway(opts: { yaml?: string } = {}): Promise<TestGateway & { script: DemoScript }> {
  const gw = await startGateway(opts.yaml ?? DEMO_YAML, { env: DEMO_ENV });
  const script: DemoScript = {};
  gw.fake.handle((r) => {
    const q = script[demoAccount(r)];
    if (q && q.length > 0) return q.shift();
    return simpleReply(r.format!, { text: "Done: the tests pass now.", model: r.model, usage: { input: 1200 + Math.floor(Math.random() * 800), output: 150 + Math.floor(Math.random() * 300) } }, r.stream);
  });
  return Object.assign(gw, { script });
}

/** Sends one Anthropic Messages request to the gateway; resolves with the status. */
export async function sendMessage(url: string, model: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: "user", content: "fix the failing test" }] }),
  });
  await res.text();
  return res.status;
}

/** Drives realistic state: traffic with quota headers, a 429 cooldown on one model, a locked account. */
export async function driveDemoState(gw: TestGateway & { script: DemoScript }): Promise<void> {
  const H = 3_600_000;
  const ok = (used5h: number, used7d: number, reset5h: number, reset7d: number) => (r: ReceivedRequest): FakeReply => ({
    ...simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 2400, output: 380 } }, r.stream),
    headers: unifiedHeaders(used5h, used7d, reset5h, reset7d),
  });
  const fakeReq = { format: "anthropic-messages", model: "claude-sonnet-4-5", stream: false } as ReceivedRequest;
  gw.script["claude-work"] = [ok(0.31, 0.12, 3.2 * H, 4.5 * 24 * H)(fakeReq), ok(0.34, 0.13, 3.2 * H, 4.5 * 24 * H)(fakeReq), ok(0.38, 0.14, 3.2 * H, 4.5 * 24 * H)(fakeReq)];
  for (let i = 0; i < 3; i++) await sendMessage(gw.url, "claude/claude-sonnet-4-5");
  gw.script["claude-personal"] = [ok(0.86, 0.61, 1.1 * H, 2 * 24 * H)(fakeReq)];
  // claude-work is preferred (priority 0): a cooldown on it sends the next request to claude-personal.
  gw.script["claude-work"] = [
    { status: 429, headers: { "retry-after": "600", ...unifiedHeaders(0.4, 0.15, 3.2 * H, 4.5 * 24 * H) }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } },
  ];
  await sendMessage(gw.url, "claude/claude-sonnet-4-5");
  for (let i = 0; i < 3; i++) await sendMessage(gw.url, "fast");
  gw.script["glm-main"] = [{ status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } }];
  await sendMessage(gw.url, "glm/glm-5.3");
  await sendMessage(gw.url, "coding");
}
