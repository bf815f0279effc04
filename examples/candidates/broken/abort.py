# expect: crash -- the process aborts (SIGABRT) at import.
import os

os.abort()
