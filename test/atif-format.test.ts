/** A trajectory file as Harbor's `format_trajectory_json` writes it: indented, each array of numbers on one line. */
import { describe, expect, it } from 'vitest';
import { trajectoryJson } from '../src/model/atif/format.ts';
import type { Trajectory } from '../src/model/atif/index.ts';

describe('trajectoryJson', () => {
  it('indents by two spaces, puts each array of numbers on one line, and ends with a line break', () => {
    const trajectory = {
      agent: { name: 'a', version: '1' },
      steps: [{ step_id: 1, source: 'agent', message: 'hi', metrics: { prompt_token_ids: [1, 22, 333], logprobs: [-0.5, -1.25e-7, 0], completion_token_ids: [7] } }],
    } as Trajectory;
    expect(trajectoryJson(trajectory)).toBe(
      [
        '{',
        '  "agent": {',
        '    "name": "a",',
        '    "version": "1"',
        '  },',
        '  "steps": [',
        '    {',
        '      "step_id": 1,',
        '      "source": "agent",',
        '      "message": "hi",',
        '      "metrics": {',
        '        "prompt_token_ids": [1, 22, 333],',
        '        "logprobs": [-0.5, -1.25e-7, 0],',
        '        "completion_token_ids": [7]',
        '      }',
        '    }',
        '  ]',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('leaves arrays that hold anything but numbers as JSON.stringify indents them', () => {
    const extra = { mixed: [1, 'two'], words: ['1', '2'], empty: [], nested: [{ n: 1 }] };
    const trajectory = { agent: { name: 'a', version: '1', extra }, steps: [] } as unknown as Trajectory;
    expect(trajectoryJson(trajectory)).toBe(`${JSON.stringify(trajectory, null, 2)}\n`);
  });

  it('never joins numbers inside a string', () => {
    const trajectory = { agent: { name: 'a', version: '1' }, steps: [{ step_id: 1, source: 'user', message: '[\n  1,\n  2\n]' }] } as Trajectory;
    expect(JSON.parse(trajectoryJson(trajectory))).toEqual(trajectory);
    expect(trajectoryJson(trajectory)).toContain('"message": "[\\n  1,\\n  2\\n]"');
  });
});
