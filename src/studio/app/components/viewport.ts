/** The visible part of a scrolling box, for lists that draw only their visible rows. */
import type { RefObject } from "preact";
import { useLayoutEffect, useState } from "preact/hooks";

export interface Viewport {
  /** Pixels scrolled and the box's visible height. */
  top: number;
  height: number;
}

/** The rows to draw: those in view plus `overscan` on each side. */
export function visibleRows(view: Viewport, rowHeight: number, count: number, overscan = 4): { first: number; last: number } {
  return {
    first: Math.max(0, Math.floor(view.top / rowHeight) - overscan),
    last: Math.min(count, Math.ceil((view.top + view.height) / rowHeight) + overscan),
  };
}

/** The box's viewport, updated when it scrolls or resizes (`onScroll` goes on the box). */
export function useViewport(box: RefObject<HTMLElement | null>): { view: Viewport; onScroll(): void; setView(view: Viewport): void } {
  const [view, setView] = useState<Viewport>({ top: 0, height: 600 });
  const measure = () => {
    const el = box.current;
    if (el) setView({ top: el.scrollTop, height: el.clientHeight });
  };
  useLayoutEffect(() => {
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box.current!);
    return () => observer.disconnect();
  }, []);
  return { view, onScroll: measure, setView };
}
