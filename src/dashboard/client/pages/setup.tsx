/**
 * Setup (SPEC 9.4): copy-paste snippets for Claude Code, Codex and Gemini CLI with this instance's URL
 * (the page's own origin), and the model names this gateway answers to (combos and aliases).
 */
import { api } from "../api.ts";
import { Card, Snippet, useData } from "../components.tsx";
import type { Alias, Combo } from "../types.ts";

/**
 * The snippets for an instance at `origin`: `model` (a combo or alias of this gateway) as the model
 * name when there is one, else each CLI's own vendor model through its provider prefix.
 */
export function setupSnippets(origin: string, model: string | undefined, keyHint: string) {
  const m = (fallback: string) => model ?? fallback;
  return {
    claude: `export ANTHROPIC_BASE_URL=${origin}\nexport ANTHROPIC_API_KEY=${keyHint}\nclaude --model ${m("anthropic/claude-sonnet-4-5")}`,
    codex: `# ~/.codex/config.toml\nmodel = "${m("openai/gpt-5-codex")}"\nmodel_provider = "switchyard"\n\n[model_providers.switchyard]\nname = "switchyard"\nbase_url = "${origin}/v1"\nwire_api = "responses"\nenv_key = "SWITCHYARD_KEY"\n\n# then, in the shell:\nexport SWITCHYARD_KEY=${keyHint}\ncodex`,
    // A Gemini CLI never set up answers "Invalid auth method selected." until its settings.json selects
    // API-key auth, which `switchyard setup gemini` writes (README, Gemini CLI).
    gemini: `switchyard setup gemini   # once: selects API-key auth\nexport GOOGLE_GEMINI_BASE_URL=${origin}\nexport GEMINI_API_KEY=${keyHint}\ngemini --model ${m("gemini/gemini-2.5-pro")}`,
    sdk: `# OpenAI SDKs\nbase_url = "${origin}/v1"\n# Anthropic SDKs\nbase_url = "${origin}"`,
  };
}

export function SetupSnippets({ compact }: { compact?: boolean }) {
  const names = useData(async () => {
    const [combos, aliases] = await Promise.all([
      api<{ combos: Combo[] }>("/combos").catch(() => ({ combos: [] as Combo[] })),
      api<{ aliases: Alias[] }>("/aliases").catch(() => ({ aliases: [] as Alias[] })),
    ]);
    return [...aliases.aliases.map((a) => a.name), ...combos.combos.map((c) => c.name)];
  });
  const loopback = document.querySelector<HTMLMetaElement>('meta[name="access-mode"]')?.content === "loopback";
  const keyHint = loopback ? "placeholder   # any value works from this machine" : "sy-…   # a client key from the Keys page";
  const model = names.data?.[0];
  const s = setupSnippets(location.origin, model, keyHint);
  return (
    <div class={compact ? "grid-2 snippet-grid" : ""}>
      <Card title="Claude Code">
        <Snippet code={s.claude} />
      </Card>
      <Card title="Codex CLI">
        <Snippet code={s.codex} />
      </Card>
      <Card title="Gemini CLI">
        <Snippet code={s.gemini} />
      </Card>
      {!compact && (
        <Card title="Any OpenAI or Anthropic SDK">
          <Snippet code={s.sdk} />
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
