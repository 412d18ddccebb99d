/**
 * A table that keeps only the rows in view (plus a few) in the DOM: fixed-height rows between two
 * spacer rows, inside its own scrolling box, the header sticking to its top. `aria-rowcount` and
 * `aria-rowindex` tell assistive technology where the drawn rows sit in the whole table.
 */
import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";

const OVERSCAN = 4;

export function VirtualTable<T>(props: {
  caption: string;
  head: ComponentChildren;
  columns: number;
  rows: readonly T[];
  rowHeight: number;
  keyOf(row: T): string;
  /** The cells of one row (`<td>`/`<th>` elements). */
  render(row: T, index: number): ComponentChildren;
  rowClass?(row: T): string;
  testId?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 500 });
  useLayoutEffect(() => {
    const el = box.current!;
    const measure = () => setView({ top: el.scrollTop, height: el.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const { rows, rowHeight } = props;
  // The header's height is about one row: the first rows start below it.
  const first = Math.max(0, Math.floor(view.top / rowHeight) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((view.top + view.height) / rowHeight) + OVERSCAN);
  const drawn = [];
  for (let i = first; i < last; i++) {
    const row = rows[i]!;
    drawn.push(
      <tr key={props.keyOf(row)} aria-rowindex={i + 2} class={props.rowClass?.(row)} style={{ height: `${rowHeight}px` }} data-index={i}>
        {props.render(row, i)}
      </tr>,
    );
  }
  return (
    <div ref={box} class="vtable" onScroll={(e) => setView({ top: (e.target as HTMLElement).scrollTop, height: (e.target as HTMLElement).clientHeight })} data-testid={props.testId}>
      <table class="table" aria-rowcount={rows.length + 1}>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr aria-rowindex={1}>{props.head}</tr>
        </thead>
        <tbody>
          {first > 0 && (
            <tr aria-hidden="true" class="spacer" style={{ height: `${first * rowHeight}px` }}>
              <td colSpan={props.columns} />
            </tr>
          )}
          {drawn}
          {last < rows.length && (
            <tr aria-hidden="true" class="spacer" style={{ height: `${(rows.length - last) * rowHeight}px` }}>
              <td colSpan={props.columns} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
