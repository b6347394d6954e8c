/**
 * An upstream `event: error` whose data is not JSON (a proxy's plain-text error) on a native
 * passthrough (formats/sse.ts errorEventNotJson): the attempt fails as on a translated lane, a 502
 * `upstream_malformed` (retried), and the message keeps the upstream's words. Before, the Anthropic and
 * Responses taps made it a 500 "Upstream error" that dropped them.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { passthroughDriver } from "../../pipeline/re-translate.ts";

const enc = new TextEncoder();

describe("an upstream error event whose data is not JSON, on a native passthrough", () => {
  for (const format of ["anthropic-messages", "openai-responses"] as WireFormat[]) {
    test(format, () => {
      const d = passthroughDriver(codecFor(format).createTap({ family: format === "anthropic-messages" ? "anthropic" : "openai", includeUsage: true }));
      d.push(enc.encode("event: error\ndata: upstream exploded: no healthy backend\n\n"));
      expect(d.contentSeen).toBe(false);
      expect(d.earlyError).toEqual({
        kind: "api_error",
        status: 502,
        code: "upstream_malformed",
        message: "The upstream sent an error event that is not JSON: upstream exploded: no healthy backend",
      });
    });
  }
});
