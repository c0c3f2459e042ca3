// The data, then the flag the poller waits for.
items = ['tea', 'bread', 'apples'];
ready = true;
