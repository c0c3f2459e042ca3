catalogue = ['tea', 'coffee', 'cocoa'];
