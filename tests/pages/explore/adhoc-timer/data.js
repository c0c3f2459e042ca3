data = 'ready';
