"""What players and developers run: the ``cardhall`` command, the Python client
library, the terminal client, bot clients, the browser client and the load tools."""
