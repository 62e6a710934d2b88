/** Markup that is already safe: built by `html`, never from a caller's string. */
export class Html {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

type Part = Html | string | number | false | null | undefined | readonly Part[];

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for an element's content and for a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/**
 * Template tag that escapes every interpolated value unless it is itself `Html`, so a scene
 * name or a bundle's error message can never become markup. Arrays are joined; `false`,
 * `null` and `undefined` render nothing, so `${cond && html`...`}` works.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

function render(part: Part): string {
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  if (part === false || part === null || part === undefined) return '';
  return escapeHtml(String(part));
}
