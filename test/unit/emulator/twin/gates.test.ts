/**
 * The twin's gates as the CLI sets them: on by default, off by flag or environment variable, and a
 * value that is no boolean is an error naming the variable.
 */
import { describe, expect, it } from 'vitest';
import { twinGates } from '../../../../src/commands/shared/twin.js';
import { LokoError } from '../../../../src/util/errors.js';

describe('twinGates', () => {
  it('is on by default', () => {
    expect(twinGates({})).toEqual({ requireCcm: true, requireCni: true });
    expect(twinGates({ LOKO_TWIN_REQUIRE_CCM: '' })).toEqual({
      requireCcm: true,
      requireCni: true,
    });
  });

  it('is turned off by the environment or the flags; a flag turning off wins', () => {
    expect(twinGates({ LOKO_TWIN_REQUIRE_CCM: '0' })).toEqual({
      requireCcm: false,
      requireCni: true,
    });
    expect(twinGates({ LOKO_TWIN_REQUIRE_CNI: 'false', LOKO_TWIN_REQUIRE_CCM: 'Off' })).toEqual({
      requireCcm: false,
      requireCni: false,
    });
    expect(twinGates({ LOKO_TWIN_REQUIRE_CCM: '1' }, { ccmGate: false, cniGate: true })).toEqual({
      requireCcm: false,
      requireCni: true,
    });
  });

  it('names the variable and the accepted values for anything else', () => {
    expect(() => twinGates({ LOKO_TWIN_REQUIRE_CNI: 'maybe' })).toThrow(LokoError);
    expect(() => twinGates({ LOKO_TWIN_REQUIRE_CNI: 'maybe' })).toThrow(
      'LOKO_TWIN_REQUIRE_CNI="maybe" is not a boolean',
    );
  });
});
