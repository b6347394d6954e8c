/**
 * Named pieces of test configs (YAML for {@link startGateway}, `{{FAKE}}` standing for the fake
 * upstream's URL): providers of given kinds pointing at the fake upstream, each with one account
 * `<id>-1` whose key is `env:FAKE_KEY` (the harness sets it); the key tests' opening (one upstream,
 * keys required, an admin key).
 */
import type { ProviderKind } from "../../formats/codec.ts";

/** A provider of the test config: its id (the model prefix) and kind. */
export type FakeProvider = readonly [id: string, kind: ProviderKind];

/** The fake upstream's base URL for a kind, per its vendor SDK's convention (OpenAI kinds end in /v1). */
function baseUrl(kind: ProviderKind): string {
  return kind === "openai" || kind === "openai-compatible" || kind === "openai-responses" ? "{{FAKE}}/v1" : "{{FAKE}}";
}

/**
 * A `providers:` section: the heading and, for each provider of `list`, a block item of three lines
 * (`- id:`, `kind:`, `base_url:` at the fake upstream). No newline at the end: the caller writes it on
 * a line of its own, the next section (or the last provider's further fields, indented four spaces)
 * on the lines after it.
 */
export function providersAtFake(...list: FakeProvider[]): string {
  return `providers:\n${list.map(([id, kind]) => `  - id: ${id}\n    kind: ${kind}\n    base_url: "${baseUrl(kind)}"`).join("\n")}`;
}

/**
 * A `providers:` section as {@link providersAtFake}'s, but each provider at its own path of the fake
 * upstream, `{{FAKE}}/<id>` (OpenAI kinds `{{FAKE}}/<id>/v1`): the first segment of a recorded request's
 * path names the provider it was sent to (`r.path.startsWith("/p/")`). No newline at the end.
 */
export function providersAtFakePaths(...list: FakeProvider[]): string {
  return `providers:\n${list.map(([id, kind]) => `  - id: ${id}\n    kind: ${kind}\n    base_url: "${baseUrl(kind).replace("{{FAKE}}", `{{FAKE}}/${id}`)}"`).join("\n")}`;
}

/** An account of the test config: its id, its provider's id, and the environment variable holding its key (`api_key: env:<keyVar>`). */
export type FakeAccount = readonly [id: string, provider: string, keyVar: string];

/** An `accounts:` section, one block item per account of `list`, in order. No newline at the end. */
export function accountsOf(...list: FakeAccount[]): string {
  return `accounts:\n${list.map(([id, provider, keyVar]) => `  - id: ${id}\n    provider: ${provider}\n    api_key: env:${keyVar}`).join("\n")}`;
}

/**
 * A `combos:` section: for each `[name, targets]` of `list`, a combo of that name trying the `targets`
 * (`provider/model`) in order, with the default strategy (fallback, SPEC 5.1). No newline at the end.
 */
export function combosOf(...list: Array<readonly [name: string, targets: readonly string[]]>): string {
  return `combos:\n${list.map(([name, targets]) => `  - name: ${name}\n    targets:\n${targets.map((t) => `      - model: ${t}`).join("\n")}`).join("\n")}`;
}

/** `providers:` and `accounts:` sections for `list`: each provider at the fake upstream, with account `<id>-1` (api_key env:FAKE_KEY). */
export function fakeProviders(list: readonly FakeProvider[]): string {
  const accounts = list.map(([id]) => `  - id: ${id}-1\n    provider: ${id}\n    api_key: env:FAKE_KEY\n`).join("");
  return `${providersAtFake(...list)}\naccounts:\n${accounts}`;
}

/**
 * The start of a config whose switchyard keys are required (`server.require_api_key`), as the key tests
 * use it: provider `up` (kind openai) at `providerUrl` + `/v1` with account `up-1` (api_key env:UP_KEY),
 * and the `keys:` list opened with `admin` (secret `adminKey`, scope admin). The caller appends further
 * key items (`  - { name: …, … }` lines) and top-level sections; the text ends with a newline.
 */
export function keysRequiredConfig(providerUrl: string, adminKey: string): string {
  return `providers:
  - { id: up, kind: openai, base_url: "${providerUrl}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
server: { require_api_key: true }
keys:
  - { name: admin, key: ${adminKey}, scopes: [admin] }
`;
}

/** The keys of {@link spreadConfig}'s accounts `a` (KEY_A) and `b` (KEY_B), for `startGateway`'s `env`. */
export const SPREAD_ENV = { KEY_A: "sk-test-aaaaaaaa", KEY_B: "sk-test-bbbbbbbb" };

/**
 * The least-used tests' config: providers `p` and `q` (kind anthropic) at the fake upstream under the
 * paths `/p` and `/q` (a request's path names the provider it was sent to), accounts `a` (provider p,
 * env:KEY_A) and `b` (provider q, env:KEY_B) — {@link SPREAD_ENV} — and combo `spread` of `p/claude-x`
 * then `q/claude-x` with `strategy` (SPEC 5.1). `moreCombos`: further items of `combos:` after it, each
 * line indented as `  - name: …`, ending with a newline.
 */
export function spreadConfig(strategy: string, moreCombos = ""): string {
  return `
${providersAtFakePaths(["p", "anthropic"], ["q", "anthropic"])}
accounts:
  - { id: a, provider: p, api_key: env:KEY_A }
  - { id: b, provider: q, api_key: env:KEY_B }
combos:
  - name: spread
    strategy: ${strategy}
    targets:
      - model: p/claude-x
      - model: q/claude-x
${moreCombos}`;
}

/**
 * The cost tests' config: provider `p` (kind anthropic) at the fake upstream with account `a1` (api_key
 * env:KEY_A1), and a `settings.pricing` entry giving model `p/claude-a` the price `price`, a YAML flow
 * map in the config's units (USD per million tokens; `web_searches` USD per search), e.g.
 * `{ input: 1, output: 2 }`. Other models of `p` are priced by the price table.
 */
export function pricedAnthropicConfig(price: string): string {
  return `
${providersAtFake(["p", "anthropic"])}
accounts:
  - { id: a1, provider: p, api_key: env:KEY_A1 }
settings:
  pricing:
    p/claude-a: ${price}
`;
}

/**
 * A config of one provider at the fake upstream ({@link fakeProviders}: account `<id>-1`, api_key
 * env:FAKE_KEY) whose switchyard keys are required (`server.require_api_key`), with two keys: `admin`
 * (secret `adminKey`, scope admin) and `client` (secret `clientKey`, no scopes; `clientFields`: more
 * fields of its flow map, e.g. `limits: { budgets: [{ window: 1d, usd: 5 }] }`). Ends with a newline.
 */
export function adminAndClientKeys(provider: FakeProvider, adminKey: string, clientKey: string, clientFields = ""): string {
  const [id] = provider;
  return `${providersAtFake(provider)}
accounts:
  - { id: ${id}-1, provider: ${id}, api_key: env:FAKE_KEY }
server: { require_api_key: true }
keys:
  - { name: admin, key: ${adminKey}, scopes: [admin] }
  - { name: client, key: ${clientKey}${clientFields ? `, ${clientFields}` : ""} }
`;
}
