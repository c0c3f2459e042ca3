// instrument: error
<!DOCTYPE html><p>404 Not Found</p>
