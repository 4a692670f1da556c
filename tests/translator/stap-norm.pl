# stap -p1 doubles the backslashes of printf/printd formats each time it
# prints them (so its output does not read back as the same tree); marktap
# prints them as written.  Undo stap's doubling before comparing.
s/\b(s?print(?:f|d|dln))\("((?:[^"\\]|\\.)*)"/my ($f, $b) = ($1, $2); $b =~ s{\\\\}{\\}g; "$f(\"$b\""/ge;
