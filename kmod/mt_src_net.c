/*
 * mt_src_net.c - the seed's net/ markers (007 patch), on 6.1.
 *
 * Device transmit and receive have tracepoints; socket sends and receives
 * are kprobes on the security hooks sock_sendmsg/sock_recvmsg call first
 * (where the seed's markers were); address changes come from the inetaddr notifier chain, which
 * tells exactly what __inet_insert_ifa / __inet_del_ifa did.
 * skb->protocol is recorded raw (network byte order), as the seed did.
 */
#include <linux/kernel.h>
#include <linux/inetdevice.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <net/sock.h>
#include "mt_kmod.h"

static void probe_dev_queue(void *data, struct sk_buff *skb)
{
	mt_kmarker_fire(&mt_m_net_dev_xmit, skb, (unsigned)(u16)skb->protocol);
}

static void probe_receive_skb(void *data, struct sk_buff *skb)
{
	mt_kmarker_fire(&mt_m_net_dev_receive, skb, (unsigned)(u16)skb->protocol);
}

/* security_socket_{send,recv}msg(sock, msg, size, ...) */
static void fire_sock(struct mt_kmarker *m, struct pt_regs *regs)
{
	struct socket *sock = (struct socket *)regs->di;
	struct sock *sk = sock ? READ_ONCE(sock->sk) : NULL;

	if (sk)
		mt_kmarker_fire(m, sock, (int)sk->sk_family, (int)sk->sk_type,
				(int)sk->sk_protocol, (size_t)regs->dx);
}

static int pre_sendmsg(struct kprobe *p, struct pt_regs *regs)
{
	fire_sock(&mt_m_net_socket_sendmsg, regs);
	return 0;
}

static int pre_recvmsg(struct kprobe *p, struct pt_regs *regs)
{
	fire_sock(&mt_m_net_socket_recvmsg, regs);
	return 0;
}

static int on_inetaddr(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct in_ifaddr *ifa = ptr;

	if (event == NETDEV_UP)
		mt_kmarker_fire(&mt_m_net_insert_ifa_ipv4, ifa->ifa_label,
				(unsigned long)ifa->ifa_address);
	else if (event == NETDEV_DOWN)
		mt_kmarker_fire(&mt_m_net_del_ifa_ipv4, ifa->ifa_label);
	return NOTIFY_DONE;
}

static MT_TP_HOOK(h_net_dev_queue, "net_dev_queue", probe_dev_queue, NULL);
static MT_TP_HOOK(h_netif_receive_skb, "netif_receive_skb", probe_receive_skb, NULL);
/*
 * sock_sendmsg/sock_recvmsg are inlined into the system calls on 6.1; the
 * security hooks they call first are not, and they get the size too.
 */
static MT_KPROBE_HOOK(h_sock_sendmsg, "security_socket_sendmsg", pre_sendmsg, "needs CONFIG_SECURITY");
static MT_KPROBE_HOOK(h_sock_recvmsg, "security_socket_recvmsg", pre_recvmsg, "needs CONFIG_SECURITY");
static struct mt_hook h_inetaddr = {
	.name = "inetaddr_chain", .kind = MT_HOOK_INETADDR, .notify = on_inetaddr,
};
MT_KMARKER(net_dev_xmit, "tracepoint net:net_dev_queue", &h_net_dev_queue);
MT_KMARKER(net_dev_receive, "tracepoint net:netif_receive_skb", &h_netif_receive_skb);
MT_KMARKER(net_socket_sendmsg, "kprobe security_socket_sendmsg (in sock_sendmsg)", &h_sock_sendmsg);
MT_KMARKER(net_socket_recvmsg, "kprobe security_socket_recvmsg (in sock_recvmsg)", &h_sock_recvmsg);
MT_KMARKER(net_insert_ifa_ipv4, "notifier inetaddr_chain (NETDEV_UP)", &h_inetaddr);
MT_KMARKER(net_del_ifa_ipv4, "notifier inetaddr_chain (NETDEV_DOWN)", &h_inetaddr);
