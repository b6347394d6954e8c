/**
 * A client body translated the way the pipeline does it, without the pipeline: parsed with the client
 * format's codec and built with the target's (non-streamed), for format tests of what reaches a provider.
 */
import { codecFor } from "../../formats/index.ts";
import type { BuildTarget, ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";

/** The provider family each test target kind stands for (others: a provider of its own). */
const FAMILY: Partial<Record<ProviderKind, BuildTarget["family"]>> = {
  openai: "openai",
  "openai-responses": "openai",
  anthropic: "anthropic",
  gemini: "gemini",
};

/** Client body of `from` → provider body for a `kind` target speaking `to` (non-streamed), with its warnings. */
export function translateBody(from: WireFormat, body: Record<string, unknown>, to: WireFormat, kind: ProviderKind, model = "up-model") {
  const hub = codecFor(from).parseRequest!(body);
  const target: BuildTarget = { model, kind, family: FAMILY[kind] ?? "provider:x", stream: false };
  return codecFor(to).buildRequest({ ...hub, model, stream: false }, target);
}
