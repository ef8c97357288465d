/** A trajectory file as Harbor's `format_trajectory_json` writes it: indented, each array of numbers on one line. */
import { describe, expect, it } from 'vitest';
import { trajectoryJson } from '../../src/model/atif/format.ts';
import { type Trajectory, TrajectorySchema } from '../../src/model/atif/index.ts';

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

describe('trajectoryJson and half characters', () => {
  const message = (text: string) => ({ agent: { name: 'a', version: '1' }, steps: [{ step_id: 1, source: 'agent', message: text }] }) as Trajectory;

  it('writes a lone surrogate (in a value or a key) as U+FFFD, so that the file passes the schema Harbor reads it with', () => {
    const cut = '😀'.slice(0, 1);
    const trajectory = { ...message(`answer ${cut} and ${'😀'.slice(1)}!`), extra: { [`key${cut}`]: [cut] } } as unknown as Trajectory;
    expect(TrajectorySchema.safeParse(trajectory).success).toBe(false);
    const written = JSON.parse(trajectoryJson(trajectory));
    expect(written.steps[0].message).toBe('answer \uFFFD and \uFFFD!');
    expect(written.extra).toEqual({ 'key\uFFFD': ['\uFFFD'] });
    expect(TrajectorySchema.safeParse(written).success).toBe(true);
  });

  it('keeps whole characters, and the text \\ud83d written by the agent, as they are', () => {
    for (const text of ['😀 whole', String.raw`the escape \ud83d as text`, String.raw`\\ud83d`, '\\\uD83D\uDE00']) {
      expect(JSON.parse(trajectoryJson(message(text))).steps[0].message).toBe(text);
    }
    expect(JSON.parse(trajectoryJson(message('\\\uD83D'))).steps[0].message).toBe('\\\uFFFD');
  });
});
