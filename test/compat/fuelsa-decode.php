<?php
// Decodes a FuelSA answer (stdin) the way FuelSA's PHP client and WordPress plugin use it:
// json_decode into arrays, then the same keys read from each item. Any warning (a missing key,
// a wrong type) is fatal. Prints one line per item:
//   petrol|<location>|<octane>|<type>|<value>|R<rand>|<date in UTC>|<date in Johannesburg>
//   diesel|<location>|<ppm>|<percentage>|<value>|R<rand>|<date in UTC>|<date in Johannesburg>

set_error_handler(function ($no, $message) {
    throw new ErrorException($message, 0, $no);
});

function rand_of($value) {
    if (!is_int($value)) {
        throw new Exception('value is not an integer: ' . var_export($value, true));
    }
    return 'R' . number_format(floatval($value) / 100, 2);
}

function day_of($date, $zone) {
    if (!is_string($date)) {
        throw new Exception('date is not a string');
    }
    date_default_timezone_set($zone);
    $t = strtotime($date);
    if ($t === false) {
        throw new Exception('strtotime cannot read ' . $date);
    }
    return date('Y-m-d', $t);
}

function text($item, $key) {
    if (!is_string($item[$key])) {
        throw new Exception($key . ' is not a string');
    }
    return $item[$key];
}

try {
    $result = json_decode(file_get_contents('php://stdin'), true, 512, JSON_THROW_ON_ERROR);
    foreach ($result['petrol'] as $item) {
        echo implode('|', [
            'petrol', text($item, 'location'), text($item, 'octane'), text($item, 'type'), $item['value'],
            rand_of($item['value']), day_of($item['date'], 'UTC'), day_of($item['date'], 'Africa/Johannesburg'),
        ]), "\n";
    }
    foreach ($result['diesel'] as $item) {
        echo implode('|', [
            'diesel', text($item, 'location'), text($item, 'ppm'), text($item, 'percentage'), $item['value'],
            rand_of($item['value']), day_of($item['date'], 'UTC'), day_of($item['date'], 'Africa/Johannesburg'),
        ]), "\n";
    }
} catch (Throwable $e) {
    fwrite(STDERR, $e->getMessage() . "\n");
    exit(1);
}
