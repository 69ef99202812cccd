import { internationalPhone, normalizePhone } from '#shared/contacts/phone.ts';

describe('normalizePhone', () => {
  it.each([
    ['+14155550123', '+14155550123'],
    ['1 (415) 555-0123', '+14155550123'],
    ['+52 1 55 1234 5678', '+5215512345678'],
    ['5215512345678', '+5215512345678'],
    ['0044 7911 123456', '+447911123456'],
    ['(+52) 155 0000 1111', '+5215500001111'],
    ['(0044) 7911 123456', '+447911123456'],
    // The trunk 0 written in parentheses after the calling code is not dialled from abroad.
    ['+44 (0)20 7946 3639', '+442079463639'],
    ['+49 (0) 151 2345 3639', '+4915123453639'],
  ])('normalises %s to %s', (input, expected) => {
    expect(normalizePhone(input)).toBe(expected);
  });

  it.each(['', 'abc', '+123', '+1234567', '+0123456789', '+1234567890123456', '+99912345678', '((+14155550123', 42, null])('refuses %p', (input) => {
    expect(normalizePhone(input)).toBeNull();
  });
});

describe('the country calling codes', () => {
  it('are exactly the ones libphonenumber knows', async () => {
    const { default: metadata } = await import('libphonenumber-js/metadata.min.json', { with: { type: 'json' } });
    const { COUNTRY_CALLING_CODES } = await import('#shared/contacts/calling-codes.ts');
    expect([...COUNTRY_CALLING_CODES].sort()).toEqual([...Object.keys(metadata.country_calling_codes), ...Object.keys(metadata.nonGeographic)].sort());
  });

  it('decide as libphonenumber did, for every calling-code prefix and 20,000 random numbers', async () => {
    const { parsePhoneNumberFromString } = await import('libphonenumber-js');
    const byLibphonenumber = (digits: string) => (parsePhoneNumberFromString(`+${digits}`)?.countryCallingCode ? `+${digits}` : null);
    const random = (n: number) => Array.from({ length: n }, (_, i) => String(i === 0 ? 1 + Math.floor(Math.random() * 9) : Math.floor(Math.random() * 10))).join('');
    const numbers = [
      ...Array.from({ length: 1000 }, (_, p) => `${p}`.padEnd(11, '5')).filter((d) => !d.startsWith('0')),
      ...Array.from({ length: 20_000 }, () => random(8 + Math.floor(Math.random() * 8))),
    ];
    const differ = numbers.filter((d) => normalizePhone(`+${d}`) !== byLibphonenumber(d));
    expect(differ).toEqual([]);
  });
});

describe('internationalPhone (a number a client gives the contacts API)', () => {
  it.each([
    ['+14155550123', '+14155550123'],
    [' +1 (415) 555-0123', '+14155550123'],
    ['(+52) 155 0000 1111', '+5215500001111'],
  ])('takes %s as %s', (input, expected) => {
    expect(internationalPhone(input)).toBe(expected);
  });

  it.each(['5215512345678', '1 (415) 555-0123', '0044 7911 123456', '(0044) 7911 123456', '+123', 'abc', 5215512345678, null])('refuses %p (no leading +, or not a number)', (input) => {
    expect(internationalPhone(input)).toBeNull();
  });
});
