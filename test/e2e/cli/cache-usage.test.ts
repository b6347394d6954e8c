/**
 * What the real Codex CLI shows of the provider's prompt cache through switchyard (newuser14 K4): an
 * anthropic-compatible upstream reports 100 uncached input tokens, 5,000 read from its cache and 300
 * written to it. `codex exec --json` prints the turn's usage in `turn.completed`; Codex 0.171.0 reads
 * the writes from the Responses usage's `input_tokens_details.cache_write_tokens`, which the gateway
 * did not write (Codex showed `cache_write_input_tokens: 0`).
 */
import { describe, expect, test } from "bun:test";
import { CODEX } from "../../support/cli-install.ts";
import { CLI_TEST_TIMEOUT_MS, runCodex, summarizeRequests } from "../../support/cli-agents.ts";
import type { FakeHandler } from "../../support/fake-upstream.ts";
import { cliSuite } from "../../support/cli-suite.ts";
import { fakeProviders } from "../../support/configs.ts";

const suite = cliSuite([CODEX], `\n${fakeProviders([["anthc", "anthropic-compatible"]])}`);

const USAGE = { input_tokens: 100, cache_creation_input_tokens: 300, cache_read_input_tokens: 5000, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 300 } };

/** Every model request: a streamed Anthropic reply "cached hello" with {@link USAGE}. */
const cachedReply: FakeHandler = (req) => {
  if (req.format !== "anthropic-messages") return undefined;
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const message = { id: "msg_cache1", type: "message", role: "assistant", model: req.model, content: [], stop_reason: null, stop_sequence: null };
  return {
    sse:
      ev("message_start", { type: "message_start", message: { ...message, usage: { ...USAGE, output_tokens: 1 } } }) +
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "cached hello" } }) +
      ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
      ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 20 } }) +
      ev("message_stop", { type: "message_stop" }),
  };
};

describe("Codex → switchyard → anthropic-compatible with prompt caching", () => {
  test(
    "codex exec --json: turn.completed counts 5,000 cached and 300 cache-write input tokens",
    async () => {
      suite.gw.fake.reset();
      suite.gw.fake.handle(cachedReply);
      const r = await runCodex(suite.bins[0], { baseUrlV1: `${suite.gw.url}/v1`, model: "anthc/claude-cache", prompt: "say hi", trap: suite.trap, extraArgs: ["--json"] });
      const story = r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`);
      expect(r.run.code, story).toBe(0);
      const events = r.run.stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l));
      const done = events.find((e) => e.type === "turn.completed");
      expect(done?.usage, story).toMatchObject({ input_tokens: 5400, cached_input_tokens: 5000, cache_write_input_tokens: 300, output_tokens: 20 });
      expect(r.outside, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
