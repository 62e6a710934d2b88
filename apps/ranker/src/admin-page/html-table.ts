import { Html, html } from './html';

/** A right-aligned number. */
class Figure {
  constructor(readonly text: string) {}
}

export type Cell = Html | string | Figure;

export const figure = (text: string): Figure => new Figure(text);

/** A table with `label` as its accessible name, a header row (unless `head` is empty) and `rows`. */
export function table(label: string, head: string[], rows: Html[]): Html {
  const header =
    head.length > 0 &&
    html`<thead>
      <tr>
        ${head.map((h) => html`<th>${h}</th>`)}
      </tr>
    </thead>`;
  return html`<table aria-label="${label}">
    ${header}
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

export function row(...cells: Cell[]): Html {
  return html`<tr>
    ${cells.map(cell)}
  </tr>`;
}

/** A row led by a header cell naming it. */
export function headedRow(name: string, ...cells: Cell[]): Html {
  return html`<tr>
    <th>${name}</th>
    ${cells.map(cell)}
  </tr>`;
}

function cell(c: Cell): Html {
  return c instanceof Figure ? html`<td class="num">${c.text}</td>` : html`<td>${c}</td>`;
}
