import { toTurns, type HistoryMessage } from '#shared/ai/history.ts';

let n = 0;
const inbound = (text: string): HistoryMessage => ({ id: `m${++n}`, direction: 'inbound', text });
const outbound = (text: string): HistoryMessage => ({ id: `m${++n}`, direction: 'outbound', text });

describe('toTurns', () => {
  it('maps customer messages to user turns and sent messages to assistant turns, oldest first', () => {
    const turns = toTurns([inbound('hi'), outbound('hello, how can I help?'), inbound('price?')], 20);
    expect(turns).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello, how can I help?' },
      { role: 'user', content: 'price?' },
    ]);
  });

  it('joins consecutive messages of one side so that turns alternate', () => {
    expect(toTurns([inbound('hi'), inbound('are you there?'), inbound('  ')], 20)).toEqual([{ role: 'user', content: 'hi\nare you there?' }]);
  });

  it('starts with the customer, dropping earlier sent messages', () => {
    expect(toTurns([outbound('template: welcome'), inbound('thanks')], 20)).toEqual([{ role: 'user', content: 'thanks' }]);
  });

  it('keeps only the most recent messages', () => {
    const turns = toTurns([inbound('one'), outbound('two'), inbound('three'), outbound('four'), inbound('five')], 3);
    expect(turns.map((t) => t.content)).toEqual(['three', 'four', 'five']);
  });

  it('answers nothing when someone already spoke after the customer', () => {
    expect(toTurns([inbound('hi'), outbound('a person answered')], 20)).toEqual([]);
    expect(toTurns([], 20)).toEqual([]);
  });
});
