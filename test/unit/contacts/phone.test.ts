import { normalizePhone } from '#shared/contacts/phone.ts';

describe('normalizePhone', () => {
  it.each([
    ['+14155550123', '+14155550123'],
    ['1 (415) 555-0123', '+14155550123'],
    ['+52 1 55 1234 5678', '+5215512345678'],
    ['5215512345678', '+5215512345678'],
    ['0044 7911 123456', '+447911123456'],
  ])('normalises %s to %s', (input, expected) => {
    expect(normalizePhone(input)).toBe(expected);
  });

  it.each(['', 'abc', '+123', '+1234567', '+0123456789', '+1234567890123456', '+99912345678', 42, null])('refuses %p', (input) => {
    expect(normalizePhone(input)).toBeNull();
  });
});
