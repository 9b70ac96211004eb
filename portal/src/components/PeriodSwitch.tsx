import { useId } from 'react';

export const PERIODS = [7, 35] as const;
export type Period = (typeof PERIODS)[number];

/** 7 or 35 days, as a radio group (arrow keys move between the options). */
export function PeriodSwitch({ value, onChange }: { value: Period; onChange: (p: Period) => void }) {
  const name = useId();
  return (
    <fieldset className="segmented">
      <legend className="visually-hidden">Period</legend>
      {PERIODS.map((p) => (
        <label key={p}>
          <input type="radio" name={name} value={p} checked={value === p} onChange={() => onChange(p)} />
          <span>Last {p} days</span>
        </label>
      ))}
    </fieldset>
  );
}
