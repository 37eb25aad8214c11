/**
 * Device userdata. A placeholder for now: the kubeadm bootstrap renders real cloud-init in a later
 * issue. Userdata is create-only (DESIGN.md §3), so changing this text never touches existing devices.
 */

/** Cloud-init userdata for a new device: `#cloud-config` that only sets the hostname. */
export function placeholderUserdata(hostname: string): string {
  return ['#cloud-config', `hostname: ${hostname}`, 'preserve_hostname: false', ''].join('\n');
}
