/**
 * The `[model_providers.switchyard]` table of Codex's `config.toml` that points Codex at this gateway:
 * one source for `switchyard setup codex` (src/cli/setup.ts) and the dashboard's Setup page
 * (src/dashboard/client/pages/setup.tsx, bundled for the browser: this module imports nothing), so the
 * two agree; README "Point your agent at it" shows the same table (test/dashboard/setup-snippets.browser.test.ts
 * compares the three). Key names are Codex's `config.toml` reference; `supports_websockets = true`
 * lets Codex use the Responses WebSocket (SPEC 2.5).
 */

/** The provider id Codex's `model_provider` names. */
export const CODEX_PROVIDER_ID = "switchyard";

/**
 * The table's entries, in the order they are written, for a gateway at `gatewayUrl`
 * (`http://127.0.0.1:20128`, no trailing slash). The key Codex sends is not among them: setup writes
 * `experimental_bearer_token`, the Setup page `env_key` (a variable the reader exports).
 */
export function codexProviderTable(gatewayUrl: string): Array<[key: string, value: string | boolean]> {
  return [
    ["name", CODEX_PROVIDER_ID],
    ["base_url", `${gatewayUrl}/v1`],
    ["wire_api", "responses"],
    ["supports_websockets", true],
  ];
}

/** A value of {@link codexProviderTable} as TOML (a basic string in double quotes, or `true` / `false`). */
export function tomlValue(v: string | boolean): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}
