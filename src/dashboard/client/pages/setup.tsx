/**
 * Setup (SPEC 9.4): copy-paste snippets for Claude Code, Codex and Gemini CLI with this instance's URL
 * (the page's own origin), and the model names this gateway answers to (combos and aliases).
 */
import { CODEX_PROVIDER_ID, codexProviderTable, tomlValue } from "../../../codex-provider.ts";
import { api } from "../api.ts";
import { Card, CopyButton, Snippet, useData } from "../components.tsx";
import type { Alias, Combo, Provider } from "../types.ts";

/** Each CLI's own vendor: the provider kinds that serve it natively and its usual model. */
const VENDORS = {
  claude: { kinds: ["anthropic", "anthropic-compatible", "claude-code"], model: "claude-sonnet-4-5", general: "claude-sonnet-4-5", builtin: "anthropic" },
  codex: { kinds: ["openai-responses", "openai", "codex"], model: "gpt-5-codex", general: "gpt-5", builtin: "openai" },
  gemini: { kinds: ["gemini"], model: "gemini-2.5-pro", general: "gemini-2.5-pro", builtin: "gemini" },
} as const;

/**
 * The model a CLI's snippet names when the gateway has no combo or alias: a model of a provider of the
 * CLI's own vendor that has an account (its first configured or discovered model, else the vendor's
 * usual one), else any provider with an account and a known model, else a provider of another vendor
 * with an account and that vendor's general model (`up/gpt-5` for Claude Code on a gateway with only an
 * OpenAI account that lists no models), else the built-in provider's — so a copied snippet reaches an
 * account of this gateway instead of an unconfigured built-in provider.
 */
export function snippetModel(cli: keyof typeof VENDORS, providers: readonly Provider[]): string {
  const v = VENDORS[cli];
  const served = providers.filter((p) => (p.accounts?.length ?? 0) > 0);
  const firstModel = (p: Provider) => Object.keys(p.models ?? {})[0] ?? p.discoveredModels?.[0];
  for (const kind of v.kinds) {
    const p = served.find((x) => x.kind === kind);
    if (p) return `${p.id}/${firstModel(p) ?? v.model}`;
  }
  const any = served.find((p) => firstModel(p) !== undefined);
  if (any) return `${any.id}/${firstModel(any)}`;
  for (const p of served) {
    const other = Object.values(VENDORS).find((x) => (x.kinds as readonly string[]).includes(p.kind));
    if (other) return `${p.id}/${other.general}`;
  }
  return `${v.builtin}/${v.model}`;
}

/**
 * What the snippets hold where a client key goes when keys are required (a remote browser, or
 * `require_api_key`): the user replaces it with a key of theirs; the page never shows a secret.
 */
export const KEY_PLACEHOLDER = "sy-YOUR-KEY";

/** What a snippet puts in the client's key variable, and the comment line above it saying why. */
export interface KeyHint {
  value: string;
  note: string;
}

/**
 * The snippets for an instance at `origin`: `model` (a combo or alias of this gateway) as the model
 * name when there is one, else {@link snippetModel} for each CLI. Comments stand on lines of their own
 * (never after a command), so a card about 50 monospace characters wide shows every line unwrapped.
 */
export function setupSnippets(origin: string, model: string | undefined, key: KeyHint, providers: readonly Provider[] = []) {
  const m = (cli: keyof typeof VENDORS) => model ?? snippetModel(cli, providers);
  // the table `switchyard setup codex` writes (src/codex-provider.ts), with the key from a variable
  const codexTable = codexProviderTable(origin)
    .map(([k, v]) => `${k} = ${tomlValue(v)}`)
    .join("\n");
  return {
    claude: `export ANTHROPIC_BASE_URL=${origin}\n# ${key.note}\nexport ANTHROPIC_API_KEY=${key.value}\nclaude --model ${m("claude")}`,
    codex: `# ~/.codex/config.toml\nmodel = "${m("codex")}"\nmodel_provider = "${CODEX_PROVIDER_ID}"\n\n[model_providers.${CODEX_PROVIDER_ID}]\n${codexTable}\nenv_key = "SWITCHYARD_KEY"\n\n# then, in the shell:\n# ${key.note}\nexport SWITCHYARD_KEY=${key.value}\ncodex`,
    // A Gemini CLI never set up answers "Invalid auth method selected." until its settings.json selects
    // API-key auth, which `switchyard setup gemini` writes (README, Gemini CLI). `--url` names this
    // instance: without it setup looks for instance.json in ~/.switchyard, which a gateway started with
    // another data directory (scripts/demo's) does not write there. `--client-key` hands it the key exported
    // above: setup checks it against the gateway (a gateway that requires keys refuses setup's own
    // placeholder) and writes it to ~/.gemini/.env. The line is continued so no line is wider than the card.
    gemini: `export GOOGLE_GEMINI_BASE_URL=${origin}\n# ${key.note}\nexport GEMINI_API_KEY=${key.value}\n# once: selects API-key auth\nswitchyard setup gemini --url ${origin} \\\n  --client-key "$GEMINI_API_KEY"\ngemini --model ${m("gemini")}`,
    sdk: `# OpenAI SDKs\nbase_url = "${origin}/v1"\n# Anthropic SDKs\nbase_url = "${origin}"`,
  };
}

export function SetupSnippets({ compact }: { compact?: boolean }) {
  const names = useData(async () => {
    const [combos, aliases, providers] = await Promise.all([
      api<{ combos: Combo[] }>("/combos").catch(() => ({ combos: [] as Combo[] })),
      api<{ aliases: Alias[] }>("/aliases").catch(() => ({ aliases: [] as Alias[] })),
      api<{ providers: Provider[] }>("/providers").catch(() => ({ providers: [] as Provider[] })),
    ]);
    return { names: [...aliases.aliases.map((a) => a.name), ...combos.combos.map((c) => c.name)], providers: providers.providers };
  });
  const loopback = document.querySelector<HTMLMetaElement>('meta[name="access-mode"]')?.content === "loopback";
  // Never a key's secret (SPEC 9.4): from loopback any value passes; elsewhere keys are required, and
  // the user puts one of theirs in place of the placeholder.
  const key: KeyHint = loopback ? { value: "placeholder", note: "any key value works from this machine" } : { value: KEY_PLACEHOLDER, note: `replace ${KEY_PLACEHOLDER} with a client key (Keys page)` };
  const model = names.data?.names[0];
  const s = setupSnippets(location.origin, model, key, names.data?.providers);
  return (
    <div class={compact ? "grid-2 snippet-grid" : ""}>
      <Card title="Claude Code" actions={<CopyButton code={s.claude} />}>
        <Snippet code={s.claude} copy={false} />
      </Card>
      <Card title="Codex CLI" actions={<CopyButton code={s.codex} />}>
        <Snippet code={s.codex} copy={false} />
      </Card>
      <Card title="Gemini CLI" actions={<CopyButton code={s.gemini} />}>
        <Snippet code={s.gemini} copy={false} />
      </Card>
      {!compact && (
        <Card title="Any OpenAI or Anthropic SDK" actions={<CopyButton code={s.sdk} />}>
          <Snippet code={s.sdk} copy={false} />
        </Card>
      )}
    </div>
  );
}

export function SetupPage() {
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <h1>Setup</h1>
          <p class="muted">
            Point your agent at <code>{location.origin}</code>. Model names: <code>provider/model</code> goes straight to that provider; a combo or alias name routes through it.
          </p>
        </div>
      </header>
      <SetupSnippets />
    </div>
  );
}
