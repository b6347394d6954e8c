/**
 * Named pieces of test configs (YAML for {@link startGateway}, `{{FAKE}}` standing for the fake
 * upstream's URL): providers of given kinds pointing at the fake upstream, each with one account
 * `<id>-1` whose key is `env:FAKE_KEY` (the harness sets it).
 */
import type { ProviderKind } from "../../formats/codec.ts";

/** A provider of the test config: its id (the model prefix) and kind. */
export type FakeProvider = readonly [id: string, kind: ProviderKind];

/** The fake upstream's base URL for a kind, per its vendor SDK's convention (OpenAI kinds end in /v1). */
function baseUrl(kind: ProviderKind): string {
  return kind === "openai" || kind === "openai-compatible" || kind === "openai-responses" ? "{{FAKE}}/v1" : "{{FAKE}}";
}

/** `providers:` and `accounts:` sections for `list`: each provider at the fake upstream, with account `<id>-1` (api_key env:FAKE_KEY). */
export function fakeProviders(list: readonly FakeProvider[]): string {
  const providers = list.map(([id, kind]) => `  - id: ${id}\n    kind: ${kind}\n    base_url: "${baseUrl(kind)}"\n`).join("");
  const accounts = list.map(([id]) => `  - id: ${id}-1\n    provider: ${id}\n    api_key: env:FAKE_KEY\n`).join("");
  return `providers:\n${providers}accounts:\n${accounts}`;
}
