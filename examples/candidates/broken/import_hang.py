# expect: timeout -- loading the module never finishes (run with a short --load-timeout).
import time

while True:
    time.sleep(1)
