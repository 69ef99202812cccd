/**
 * A phone number id belongs to one business (issue 23 item 7): creating or configuring a business with a number
 * another business holds is refused and changes nothing; `moveNumber` is the one explicit, logged way to hand it
 * over, and it releases the number from the business that had it.
 */
export {};
process.env.LOG_LEVEL = 'DEBUG';
const { logger } = await import('#shared/log/logger.ts');
const { createBusiness, findBusinessByPhoneNumberId, getBusiness, moveNumber, PhoneNumberTakenError, setMessagingAccount } = await import('#shared/business/repository.ts');

const logLines: any[] = [];
const sink = (line: string) => logLines.push(JSON.parse(line));
(logger as any).console = { error: sink, warn: sink, info: sink, debug: sink, log: sink };

const numberId = () => `1${String(Math.floor(Math.random() * 1e14)).padStart(14, '0')}`;

describe('phone number ownership', () => {
  it('refuses to create a business with a number another business holds', async () => {
    // Prepare
    const a = await createBusiness('A');
    // Act
    const attempt = createBusiness('B', a.phoneNumberId, 'waba_b');
    // Assess
    await expect(attempt).rejects.toThrow(PhoneNumberTakenError);
    await expect(attempt).rejects.toThrow(new RegExp(`${a.phoneNumberId} belongs to business ${a.businessId}.*move-number`));
    expect(await findBusinessByPhoneNumberId(a.phoneNumberId!)).toBe(a.businessId);
  });

  it("refuses set-messaging with another business's number, and leaves both businesses as they were", async () => {
    // Prepare
    const a = await createBusiness('A');
    const b = await createBusiness('B');
    // Act
    const attempt = setMessagingAccount(b.businessId, a.phoneNumberId!, 'waba_x');
    // Assess
    await expect(attempt).rejects.toThrow(PhoneNumberTakenError);
    expect(await findBusinessByPhoneNumberId(a.phoneNumberId!)).toBe(a.businessId);
    expect(await findBusinessByPhoneNumberId(b.phoneNumberId!)).toBe(b.businessId);
    expect((await getBusiness(b.businessId))?.phoneNumberId).toBe(b.phoneNumberId);
  });

  it('lets a business change to a free number (its old one stops routing to it) and set its own number again', async () => {
    // Prepare
    const a = await createBusiness('A');
    const fresh = numberId();
    // Act
    await setMessagingAccount(a.businessId, fresh, 'waba_a2');
    await setMessagingAccount(a.businessId, fresh, 'waba_a3');
    // Assess
    expect(await findBusinessByPhoneNumberId(fresh)).toBe(a.businessId);
    expect(await findBusinessByPhoneNumberId(a.phoneNumberId!)).toBeUndefined();
    expect(await getBusiness(a.businessId)).toMatchObject({ phoneNumberId: fresh, wabaId: 'waba_a3' });
  });

  it('moves a number explicitly: logged, released from the first business, and the first cannot take it back silently', async () => {
    // Prepare
    const a = await createBusiness('A');
    const b = await createBusiness('B');
    const number = a.phoneNumberId!;
    const logsFrom = logLines.length;
    // Act
    const { from } = await moveNumber(number, b.businessId, 'waba_b2');
    // Assess: routing, both records, B's old number released, the log line.
    expect(from).toBe(a.businessId);
    expect(await findBusinessByPhoneNumberId(number)).toBe(b.businessId);
    expect(await getBusiness(b.businessId)).toMatchObject({ phoneNumberId: number, wabaId: 'waba_b2' });
    const first = await getBusiness(a.businessId);
    expect(first?.phoneNumberId).toBeUndefined();
    expect(first?.wabaId).toBeUndefined();
    expect(await findBusinessByPhoneNumberId(b.phoneNumberId!)).toBeUndefined();
    expect(logLines.slice(logsFrom)).toContainEqual(expect.objectContaining({ level: 'WARN', phoneNumberId: number, from: a.businessId, to: b.businessId }));

    // Act: A asks for its old number again with a plain set-messaging.
    await expect(setMessagingAccount(a.businessId, number, 'waba_a')).rejects.toThrow(PhoneNumberTakenError);
    // Assess: B keeps the routing.
    expect(await findBusinessByPhoneNumberId(number)).toBe(b.businessId);
  });
});
