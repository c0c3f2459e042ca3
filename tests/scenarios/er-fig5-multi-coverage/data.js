// Writes the data, then raises the first flag of the chain.
data = { v: 7 };
stage1 = true;
