/**
 * The CSV answer of historical.php on 20 May 2025 (`month=5&year=2025&region=inland&format=csv`),
 * the example of its description. test/openapi/openapi.test.ts checks it against a real answer,
 * as it does the JSON examples of features/openapi/openapi-examples.ts.
 */
export const historicalCsv =
  'effective_date,region,zone,price_basis,petrol_93,petrol_95,diesel_50ppm,diesel_500ppm\r\n' +
  '2025-05-07,inland,,official_regional_reference,21.29,21.40,18.94,18.90\r\n';

/** The CSV answer of changes.php on 20 May 2025 for `from=2025-05&to=2025-05&region=inland&format=csv`. */
export const changesCsv =
  'effective_date,previous_effective_date,region,petrol_93,petrol_95,diesel_50ppm,diesel_500ppm\r\n' +
  '2025-05-07,2025-04-02,inland,-22,-22,-41,-42\r\n';
