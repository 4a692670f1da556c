/*
 * knet.c - packets on the guest's loopback for knetfilter.t, counted at
 * both ends so that a test can tell what netfilter let through.
 *
 *   knet udp N PORT       N datagrams of 64 bytes from 127.0.0.1 to
 *                         127.0.0.1:PORT, then what arrived within half
 *                         a second of the last: "udp sent N received M"
 *   knet tcp PORT SECONDS a connection to 127.0.0.1:PORT (a listener of
 *                         its own there), given SECONDS to complete:
 *                         "tcp connected" or "tcp timeout"
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int udp(long n, int port)
{
	struct sockaddr_in to = loopback(port);
	int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0);
	char buf[64];
	long sent = 0, received = 0;

	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&to, sizeof(to))) {
		perror("knet udp");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		memset(buf, 0, sizeof(buf));
		snprintf(buf, sizeof(buf), "marktap netfilter %ld", i);
		if (sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to)) == sizeof(buf))
			sent++;
	}
	/* loopback delivers at once; a dropped datagram never comes */
	for (;;) {
		struct pollfd p = { .fd = rx, .events = POLLIN };
		if (poll(&p, 1, 500) <= 0 || recv(rx, buf, sizeof(buf), 0) < 0)
			break;
		received++;
	}
	printf("udp sent %ld received %ld\n", sent, received);
	return 0;
}

static void on_alarm(int sig)
{
	static const char msg[] = "tcp timeout\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(0);
}

static int tcp(int port, int seconds)
{
	struct sockaddr_in to = loopback(port);
	int ls = socket(AF_INET, SOCK_STREAM, 0), s = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;

	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || s < 0 || bind(ls, (struct sockaddr *)&to, sizeof(to)) || listen(ls, 4)) {
		perror("knet tcp");
		return 1;
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned)seconds);
	if (connect(s, (struct sockaddr *)&to, sizeof(to)))
		return 1;
	printf("tcp connected\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "udp"))
		return udp(atol(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "tcp"))
		return tcp(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: knet udp N PORT | tcp PORT SECONDS\n");
	return 2;
}
