/**
 * Starts a real switchyard instance (the same assembly `switchyard start` uses) on 127.0.0.1:0 with a
 * scratch data directory and a config file written from YAML, next to a fake upstream.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp, type App } from "../../src/app.ts";
import type { Clock } from "../../pipeline/ports.ts";
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from "./fake-upstream.ts";
import { pricedAnthropicConfig, providersAtFake } from "./configs.ts";

export interface TestGateway {
  app: App;
  url: string;
  fake: FakeUpstream;
  dataDir: string;
  configPath: string;
  /** Log lines the gateway wrote (one JSON line per request), those of every finished request included (read settles the gateway's after-reply work first). */
  readonly logs: string[];
  stop(): Promise<void>;
  /** Stops the gateway only, keeping the data directory and the fake (restart tests). */
  stopGatewayOnly(): Promise<void>;
}

/**
 * `yaml` may use `{{FAKE}}` for the fake upstream's base URL (http://127.0.0.1:PORT). When omitted, a
 * config with one provider per format pointing at the fake is used: `anth` (anthropic), `oai` (openai),
 * `resp` (openai-responses), `chat` (openai-compatible), `anthc` (anthropic-compatible), `gem` (gemini).
 */
export async function startGateway(
  yaml?: string,
  opts: {
    env?: Record<string, string>;
    clock?: Clock;
    dataDir?: string;
    fake?: FakeUpstream;
    /** Options of the fake started when `fake` is not given (e.g. `inProcess` for timer scenarios). */
    fakeOptions?: FakeUpstreamOptions;
    responsesSocketIdleMs?: number;
    /** How long a request waits for an account's concurrency slot, ms (default 15 s). */
    slotWaitMs?: number;
    onResponsesSocketHeldBack?: () => void;
  } = {},
): Promise<TestGateway> {
  const fake = opts.fake ?? (await startFakeUpstream(opts.fakeOptions));
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "switchyard-test-"));
  const configPath = join(dataDir, "config.yaml");
  writeFileSync(configPath, (yaml ?? DEFAULT_YAML).replaceAll("{{FAKE}}", fake.url));
  const logs: string[] = [];
  const app = await startApp({
    configPath,
    host: "127.0.0.1",
    port: 0,
    dataDir,
    env: { FAKE_KEY: "sk-fake-upstream-secret", ...opts.env },
    clock: opts.clock,
    // The fake's fetch, so that its resets follow the gateway's reads (FakeReply.reset_after_bytes).
    fetchImpl: fake.fetch,
    log: (l) => logs.push(l),
    responsesSocketIdleMs: opts.responsesSocketIdleMs,
    slotWaitMs: opts.slotWaitMs,
    onResponsesSocketHeldBack: opts.onResponsesSocketHeldBack,
  });
  return {
    app,
    url: app.url,
    fake,
    dataDir,
    configPath,
    get logs() {
      app.settle();
      return logs;
    },
    async stop() {
      await app.shutdown(1000);
      await fake.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    async stopGatewayOnly() {
      await app.shutdown(1000);
    },
  };
}

export const DEFAULT_YAML = `
${providersAtFake(["anth", "anthropic"], ["oai", "openai"], ["resp", "openai-responses"], ["chat", "openai-compatible"], ["anthc", "anthropic-compatible"], ["gem", "gemini"])}
accounts:
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
  - id: oai-1
    provider: oai
    api_key: env:FAKE_KEY
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
  - id: gem-1
    provider: gem
    api_key: env:FAKE_KEY
`;

/**
 * The gateways of a restart test: started one after another on one data directory, beside one fake
 * upstream (started by the first {@link GatewayRestarts.upstream} or {@link GatewayRestarts.start}).
 * The test stops each gateway itself (`stopGatewayOnly`, e.g. to have the usage rows written) before it
 * starts the next; {@link GatewayRestarts.stop} (for `afterAll`/`afterEach`) stops the last gateway and
 * the fake and removes the data directory, after which the next `start` begins afresh.
 */
export interface GatewayRestarts {
  /** The fake upstream, started at the first call (so that a test can set its handler before the first gateway starts). */
  upstream(): Promise<FakeUpstream>;
  /** Starts a gateway on the fake and the data directory (a new scratch one for the first); `opts.fake` and `opts.dataDir` are set by this. */
  start(yaml: string, opts?: Omit<NonNullable<Parameters<typeof startGateway>[1]>, "fake" | "dataDir">): Promise<TestGateway>;
  /** Stops the gateway started last (again if the test stopped it), then the fake; removes the data directory. */
  stop(): Promise<void>;
}

/** A {@link GatewayRestarts}: nothing is started until the test asks. */
export function gatewayRestarts(): GatewayRestarts {
  let fake: FakeUpstream | undefined;
  let gw: TestGateway | undefined;
  let dataDir: string | undefined;
  const upstream = async () => (fake ??= await startFakeUpstream());
  return {
    upstream,
    async start(yaml, opts = {}) {
      gw = await startGateway(yaml, { ...opts, fake: await upstream(), dataDir });
      dataDir ??= gw.dataDir;
      return gw;
    },
    async stop() {
      await gw?.stopGatewayOnly();
      await fake?.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      gw = fake = dataDir = undefined;
    },
  };
}

/**
 * POSTs the smallest Anthropic Messages request to the gateway at `url`: `model`, `max_tokens` 20, one
 * user message "hi", not streamed. The response is returned unread.
 */
export function postHi(url: string, model: string): Promise<Response> {
  return fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
}

/**
 * POSTs the smallest Chat Completions request to the gateway at `url`: `model`, `stream` (no such field
 * when undefined), one user message "hi". The response is returned unread.
 */
export function postChatHi(url: string, model: string, stream?: boolean): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] }) });
}

/**
 * A gateway on {@link pricedAnthropicConfig}`(price)` (provider `p`, account `a1` whose key is `key`,
 * `p/claude-a` priced by `price`) whose fake upstream answers every request with one non-streamed
 * Anthropic message (id `msg_1`, the request's model, end_turn) saying `text`, with `usage` as its usage
 * object, sent as given (Anthropic's field names: `input_tokens`, `server_tool_use`, …).
 */
export async function startPricedGateway(o: { price: string; key: string; text: string; usage: Record<string, unknown> }): Promise<TestGateway> {
  const gw = await startGateway(pricedAnthropicConfig(o.price), { env: { KEY_A1: o.key } });
  gw.fake.handle((r) => ({
    json: { id: "msg_1", type: "message", role: "assistant", model: r.model, content: [{ type: "text", text: o.text }], stop_reason: "end_turn", usage: o.usage },
  }));
  return gw;
}
