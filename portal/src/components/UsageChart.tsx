/**
 * Chart.js on a canvas, registered with only the pieces used (tree-shaken). The canvas carries a text
 * summary for screen readers; every chart is paired with a data table by its caller.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartDataset,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { useEffect, useRef } from 'react';

Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Legend, Tooltip);

export const COLORS = {
  requests: '#2563eb',
  clientErrors: '#d97706',
  serverErrors: '#dc2626',
};
export const PALETTE = [
  '#2563eb',
  '#059669',
  '#7c3aed',
  '#db2777',
  '#0891b2',
  '#ca8a04',
  '#4b5563',
  '#ea580c',
  '#16a34a',
  '#9333ea',
];

interface UsageChartProps {
  labels: string[];
  datasets: ChartDataset<'bar' | 'line', number[]>[];
  stacked?: boolean;
  summary: string;
  /**
   * A click on the chart: the day's index and the dataset clicked (null: the day's column, no dataset
   * under the pointer). Pointer only: callers offer the same links in their data table.
   */
  onPick?: (index: number, datasetIndex: number | null) => void;
}

export function UsageChart({ labels, datasets, stacked = false, summary, onPick }: UsageChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<'bar' | 'line', number[], string> | null>(null);
  const pick = useRef(onPick);
  pick.current = onPick;

  useEffect(() => {
    if (!canvas.current) return;
    const reduceMotion = window.matchMedia?.('(prefers-reduced-motion: reduce)').matches;
    chart.current = new Chart<'bar' | 'line', number[], string>(canvas.current, {
      type: 'bar',
      data: { labels: [], datasets: [] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: reduceMotion ? false : { duration: 300 },
        interaction: { mode: 'index', intersect: false },
        onClick: (event, _elements, c) => {
          if (!pick.current || !event.native) return;
          const hit = c.getElementsAtEventForMode(event.native, 'nearest', { intersect: true }, false)[0];
          const column = c.getElementsAtEventForMode(event.native, 'index', { intersect: false }, false)[0];
          if (hit) pick.current(hit.index, hit.datasetIndex);
          else if (column) pick.current(column.index, null);
        },
        onHover: (event, _elements, c) => {
          if (pick.current && event.native?.target instanceof HTMLElement) {
            const over = c.getElementsAtEventForMode(event.native, 'index', { intersect: false }, false).length > 0;
            event.native.target.style.cursor = over ? 'pointer' : 'default';
          }
        },
        // Legend in dataset order (the `order` option, which draws lines over bars, would reverse it).
        plugins: { legend: { position: 'bottom', labels: { sort: (a, b) => (a.datasetIndex ?? 0) - (b.datasetIndex ?? 0) } } },
        scales: {
          x: { stacked, grid: { display: false } },
          y: { stacked, beginAtZero: true, ticks: { precision: 0 } },
        },
      },
    });
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
  }, [stacked]);

  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.data.labels = labels;
    c.data.datasets = datasets;
    c.update();
  }, [labels, datasets]);

  return (
    <div className="chart" data-series={datasets.map((d) => d.label).join('\n')}>
      <canvas ref={canvas} role="img" aria-label={summary}>
        {summary}
      </canvas>
    </div>
  );
}
