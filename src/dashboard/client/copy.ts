/**
 * Copying a text to the clipboard from a Copy button. `navigator.clipboard` exists in secure contexts
 * only (HTTPS, localhost, 127.0.0.1): at a LAN name over plain HTTP (`http://gateway.lan:20128`, the
 * README's LAN steps) it is undefined. There the text is put into a read-only field, selected and
 * copied with `document.execCommand("copy")` (deprecated, still the only way there), the field removed
 * at once and the focus given back.
 */

/** What the Copy button says after a copy that worked. */
export const COPIED = "Copied";
/**
 * What the Copy button says when neither way copied: the text is selected for the user to copy, with
 * the platform's copy keys — "⌘C" on macOS and iOS (User-Agent Client Hints' `platform` "macOS", else
 * `navigator.platform` "MacIntel", "iPhone", "iPad"), "Ctrl+C" elsewhere.
 */
export function copyByHand(): string {
  return `Select the text and press ${onApple() ? "⌘C" : "Ctrl+C"}`;
}

function onApple(): boolean {
  const nav = navigator as Navigator & { userAgentData?: { platform?: string } };
  const platform = nav.userAgentData?.platform || navigator.platform || "";
  return /^(mac|iphone|ipad|ipod)/i.test(platform);
}

/** Copies `text`; resolves true when the clipboard took it, false when neither way worked. Never throws. */
export async function copyText(text: string): Promise<boolean> {
  if (window.isSecureContext && navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // refused (no permission, the document not focused): try the other way
    }
  }
  return copyBySelection(text);
}

function copyBySelection(text: string): boolean {
  const back = document.activeElement as HTMLElement | null;
  const field = document.createElement("textarea");
  field.value = text;
  field.readOnly = true;
  field.setAttribute("aria-hidden", "true");
  field.tabIndex = -1;
  field.className = "copy-field";
  document.body.appendChild(field);
  let ok = false;
  try {
    field.focus({ preventScroll: true });
    field.select();
    field.setSelectionRange(0, text.length);
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  } finally {
    field.remove();
    back?.focus?.();
  }
  return ok;
}

/** Selects the whole text of `el` on the page, so the user can copy it by hand. */
export function selectText(el: Element | null | undefined): void {
  if (!el) return;
  const sel = window.getSelection();
  if (!sel) return;
  const range = document.createRange();
  range.selectNodeContents(el);
  sel.removeAllRanges();
  sel.addRange(range);
}
