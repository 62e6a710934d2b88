import { Html, html } from './html';

/** The whole stylesheet: inline, so the page needs no asset route and works offline. */
const STYLE = `
:root { color-scheme: light; --ok: #116329; --bad: #a40e26; --wait: #7d4e00; --muted: #57606a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1f2328; background: #f6f8fa; }
header { display: flex; align-items: center; gap: 16px; padding: 12px 24px; background: #24292f; color: #fff; }
header h1 { font-size: 18px; margin: 0; }
header p { margin: 0; color: #d0d7de; flex: 1; }
header a { color: #fff; }
main { padding: 8px 24px 32px; max-width: 1200px; }
section.scene { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 16px 12px; margin-top: 16px; }
h2 { font-size: 17px; margin: 16px 0 8px; }
h3 { font-size: 14px; margin: 14px 0 6px; }
table { border-collapse: collapse; background: #fff; margin: 4px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.state, .check { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 12px; font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.serving, .ready, .pass, .healthy { color: var(--ok); }
.failed, .fail, .rolled-back { color: var(--bad); }
.loading, .warming, .draining, .pending, .collecting { color: var(--wait); }
.skipped, .available, .incomplete { color: var(--muted); }
.empty { color: var(--muted); font-style: italic; margin: 4px 0; }
ul.reasons { margin: 4px 0; padding-left: 20px; color: var(--bad); }
code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, monospace; }
.error { color: var(--bad); font-weight: 600; }
form.login { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 16px; max-width: 420px; margin-top: 24px; }
form.login input { width: 100%; padding: 6px; margin: 6px 0 12px; font: inherit; }
button { font: inherit; padding: 4px 12px; cursor: pointer; }
`;

/** A complete HTML document around `body`. */
export function renderPage(title: string, body: Html): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${title}</title>
        <style>
          ${new Html(STYLE)}
        </style>
      </head>
      <body>
        ${body}
      </body>
    </html> `.text;
}
